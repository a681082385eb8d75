"""The Kafka client library's log lines, forwarded to ``logging``.

librdkafka logs on its own threads (a refused connection, a broker that went
away). The native module keeps those lines; ``forward()`` hands them to the
``tokenfeed.kafka`` logger after each call that may have used a Kafka client,
so they follow the program's logging configuration instead of appearing raw on
stderr. Without any configuration, Python prints warnings and errors to stderr.
"""

from __future__ import annotations

import atexit
import logging

from tokenfeed import _ext

logger = logging.getLogger("tokenfeed.kafka")


def _level(severity: int) -> int:
    # syslog severities (librdkafka's) to logging levels.
    if severity <= 2:
        return logging.CRITICAL
    if severity == 3:
        return logging.ERROR
    if severity == 4:
        return logging.WARNING
    if severity <= 6:
        return logging.INFO
    return logging.DEBUG


def forward() -> None:
    """Logs the lines that arrived since the last call (cheap when none did)."""
    taken = _ext._take_client_log()
    if taken is None:
        return
    lines, dropped = taken
    if dropped:
        logger.warning("%d Kafka client log lines were dropped: more than %d arrived between two tokenfeed calls",
                       dropped, _ext._client_log_capacity)
    for severity, facility, client, message in lines:
        logger.log(_level(severity), "[%s %s] %s", facility, client, message)


atexit.register(forward)
