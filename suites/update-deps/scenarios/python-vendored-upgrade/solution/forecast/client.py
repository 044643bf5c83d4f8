"""Client for the forecast service."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date

import httpkit
import isodates
import jsonlog

log = logging.getLogger("forecast")
TIMEOUT_SECONDS = 5


class ForecastUnavailable(Exception):
    """The service did not answer with a forecast."""


@dataclass(frozen=True)
class DailyForecast:
    day: date
    high_c: float
    low_c: float


class ForecastClient:
    def __init__(self, base_url: str, transport=None) -> None:
        self.http = httpkit.Client(base_url=base_url, timeout=httpkit.Timeout(TIMEOUT_SECONDS), transport=transport)

    def daily(self, city: str, days: int = 3) -> list[DailyForecast]:
        response = self.http.get("/v1/forecast", query={"city": city, "days": days})
        try:
            response.raise_for_status()
        except httpkit.HTTPStatusError as exc:
            raise ForecastUnavailable(f"forecast for {city}: HTTP {exc.response.status_code}") from exc
        log.info(jsonlog.format_event("forecast.fetched", city=city, days=days))
        return [
            DailyForecast(day=isodates.parse_datetime(item["date"]).date(), high_c=item["max"], low_c=item["min"])
            for item in response.json()["daily"]
        ]
