from forecast.client import DailyForecast, ForecastClient, ForecastUnavailable

__all__ = ["DailyForecast", "ForecastClient", "ForecastUnavailable"]
