"""``open_client()``: the results client for this environment."""

from __future__ import annotations

import logging
import os

from harness.results.spool import Spool
from harness.results.worker_client import WorkerClient

log = logging.getLogger(__name__)

from harness.results.location import default_db_path, default_spool_dir


def open_client(worker_url: str | None = None, api_key: str | None = None,
                db_path: str | None = None, *, spool_dir: str | None = None,
                sync_spool: bool = True, retries: int | None = None, timeout_s: float = 30.0) -> WorkerClient:
    """Open the results client.

    With a worker URL (argument or ``ZE_BENCHMARKS_WORKER_URL``) requests go over HTTP with
    ``api_key`` (or ``ZE_BENCHMARKS_API_KEY``; on a loopback URL the ``worker dev``
    development key is the fallback). Without one, the worker core runs in-process on
    ``db_path`` (or the default store, found as :mod:`harness.results.location` says: the
    project's ``results/bench.db`` at or above the current directory, else the per-user store).
    A store file that does not exist is not created until something is written to it.

    HTTP requests are retried ``retries`` times (default ``$ZE_BENCHMARKS_HTTP_RETRIES``, else 3)
    before the worker counts as unreachable.

    Requests that cannot be delivered are spooled under ``spool_dir`` (or
    ``ZE_BENCHMARKS_SPOOL_DIR``, default ``spool/`` beside the default store); with ``sync_spool`` the spool
    is delivered now, before anything new is posted.
    """
    url = worker_url or os.environ.get("ZE_BENCHMARKS_WORKER_URL") or None
    spool = Spool(spool_dir or default_spool_dir())
    if url:
        from harness.results.http_transport import HttpTransport, is_loopback_url

        key = api_key or os.environ.get("ZE_BENCHMARKS_API_KEY") or None
        if key is None and is_loopback_url(url):
            from worker.config import DEV_API_KEY

            key = DEV_API_KEY
        if retries is None:
            retries = int(os.environ.get("ZE_BENCHMARKS_HTTP_RETRIES") or 3)
        transport = HttpTransport(url, key, retries=retries, timeout_s=timeout_s)
    else:
        from harness.results.inprocess import InProcessTransport

        transport = InProcessTransport(db_path or default_db_path())
    client = WorkerClient(transport, spool)
    if sync_spool and spool.count(client.destination):
        report = client.sync(wait_for_lock=False)
        if report.delivered or report.duplicates:
            log.info("delivered %d spooled request(s) to %s", report.delivered + report.duplicates,
                     transport.description)
        if report.remaining:
            log.warning("%d request(s) still spooled in %s (%s)", report.remaining,
                        spool.pending_dir, report.error or "another process is delivering")
    return client
