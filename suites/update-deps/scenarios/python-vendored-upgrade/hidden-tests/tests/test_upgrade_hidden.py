import importlib
import json
import logging
from datetime import date

import certbundle
import httpkit
import jsonlog
import pytest

from forecast import DailyForecast, ForecastClient, ForecastUnavailable


def test_httpkit_is_on_the_patched_release():
    assert httpkit.__version__ == "2.0.3"
    assert tuple(int(p) for p in certbundle.__version__.split(".")) >= (2024, 1)


def test_log_format_library_stays_on_1_8():
    # The log shipper parses {"event": ...} lines; jsonlog 2 renames the key.
    assert jsonlog.__version__ == "1.8.0"


def test_deprecated_date_parser_is_gone():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("iso8601_tiny")


def test_client_uses_a_five_second_timeout():
    client = ForecastClient("https://forecast.test")
    assert isinstance(client.http.timeout, httpkit.Timeout)
    assert client.http.timeout.read == 5


def test_client_errors_keep_their_cause():
    def handler(method, url):
        return httpkit.Response(500, "{}")

    client = ForecastClient("https://forecast.test", transport=httpkit.MockTransport(handler))
    with pytest.raises(ForecastUnavailable) as err:
        client.daily("Rome")
    assert isinstance(err.value.__cause__, httpkit.HTTPStatusError)


def test_dates_with_offsets_and_plain_dates_parse(caplog):
    body = {"daily": [{"date": "2025-12-31T23:00:00-02:00", "max": 1, "min": -3}]}

    def handler(method, url):
        assert "city=S%C3%A3o+Paulo" in url and "days=1" in url
        return httpkit.Response(200, json.dumps(body))

    client = ForecastClient("https://forecast.test", transport=httpkit.MockTransport(handler))
    with caplog.at_level(logging.INFO, logger="forecast"):
        assert client.daily("São Paulo", days=1) == [DailyForecast(date(2025, 12, 31), 1, -3)]
    assert json.loads(caplog.messages[0]) == {"event": "forecast.fetched", "city": "São Paulo", "days": 1}
