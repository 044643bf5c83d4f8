import json
import logging
from datetime import date

import httpkit
import pytest

from forecast import DailyForecast, ForecastClient, ForecastUnavailable

PAYLOAD = {"daily": [{"date": "2025-06-01T00:00:00Z", "max": 24.5, "min": 13.0},
                     {"date": "2025-06-02T00:00:00Z", "max": 22.0, "min": 12.5}]}


def service(status=200, body=PAYLOAD, seen=None):
    def handler(method, url):
        if seen is not None:
            seen.append((method, url))
        return httpkit.Response(status, json.dumps(body))

    return httpkit.MockTransport(handler)


def test_daily_forecast_is_parsed():
    seen = []
    client = ForecastClient("https://forecast.test/", transport=service(seen=seen))
    assert client.daily("Lyon", days=2) == [
        DailyForecast(date(2025, 6, 1), 24.5, 13.0),
        DailyForecast(date(2025, 6, 2), 22.0, 12.5),
    ]
    assert seen == [("GET", "https://forecast.test/v1/forecast?city=Lyon&days=2")]


def test_server_errors_become_forecast_unavailable():
    client = ForecastClient("https://forecast.test", transport=service(status=503, body={}))
    with pytest.raises(ForecastUnavailable, match="503"):
        client.daily("Lyon")


def test_fetches_are_logged_for_the_log_shipper(caplog):
    client = ForecastClient("https://forecast.test", transport=service())
    with caplog.at_level(logging.INFO, logger="forecast"):
        client.daily("Oslo", days=1)
    assert caplog.messages == ['{"city":"Oslo","days":1,"event":"forecast.fetched"}']
