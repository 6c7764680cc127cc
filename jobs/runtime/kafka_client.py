"""Kafka client settings for ``offsetlake capture``: the ``kafka:`` section of ``conf/`` plus secrets.

Settings use kafka-python's names (``security_protocol``, ``sasl_mechanism``, ``ssl_cafile``,
``request_timeout_ms`` ...). Secrets never live in ``conf/``: they come from the environment, which
also overrides the file::

    OFFSETLAKE_KAFKA_SECURITY_PROTOCOL   SASL_SSL | SSL | SASL_PLAINTEXT | PLAINTEXT
    OFFSETLAKE_KAFKA_SASL_MECHANISM      PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 | ...
    OFFSETLAKE_KAFKA_SASL_USERNAME       -> sasl_plain_username
    OFFSETLAKE_KAFKA_SASL_PASSWORD       -> sasl_plain_password
    OFFSETLAKE_KAFKA_SSL_CAFILE / _SSL_CERTFILE / _SSL_KEYFILE / _SSL_PASSWORD / _SSL_CHECK_HOSTNAME

>>> settings = client_settings({"security_protocol": "SASL_SSL"},
...                            env={"OFFSETLAKE_KAFKA_SASL_PASSWORD": "hunter2"})
>>> redact(settings)["sasl_plain_password"]
'***'
"""

from __future__ import annotations

import os
from typing import Any
from collections.abc import Mapping

from kafka import KafkaConsumer

ENV_PREFIX = "OFFSETLAKE_KAFKA_"

# Environment variable suffix -> kafka-python setting.
ENV_SETTINGS = {
    "SECURITY_PROTOCOL": "security_protocol",
    "SASL_MECHANISM": "sasl_mechanism",
    "SASL_USERNAME": "sasl_plain_username",
    "SASL_PASSWORD": "sasl_plain_password",
    "SASL_KERBEROS_SERVICE_NAME": "sasl_kerberos_service_name",
    "SSL_CAFILE": "ssl_cafile",
    "SSL_CERTFILE": "ssl_certfile",
    "SSL_KEYFILE": "ssl_keyfile",
    "SSL_PASSWORD": "ssl_password",
    "SSL_CRLFILE": "ssl_crlfile",
    "SSL_CHECK_HOSTNAME": "ssl_check_hostname",
    "CLIENT_ID": "client_id",
    "REQUEST_TIMEOUT_MS": "request_timeout_ms",
}

# What capture itself decides: a consistent, read-only, committed-only read without a group.
RESERVED = frozenset({
    "bootstrap_servers", "group_id", "group_instance_id", "isolation_level", "enable_auto_commit",
    "auto_offset_reset", "exclude_internal_topics", "key_deserializer", "value_deserializer",
    "allow_auto_create_topics", "check_crcs", "consumer_timeout_ms", "kafka_client", "selector",
})
SECRET_MARKERS = ("password", "secret", "token", "sasl_plain_username")
REDACTED = "***"


class KafkaConfigError(ValueError):
    """A ``kafka:`` setting is unknown, reserved by capture, or has the wrong type."""


def client_settings(config: Mapping[str, Any] | None = None,
                    env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """kafka-python consumer keyword arguments from the conf section and the environment."""
    env = os.environ if env is None else env
    settings = {key: value for key, value in (config or {}).items() if value is not None}
    for suffix, name in ENV_SETTINGS.items():
        value = env.get(ENV_PREFIX + suffix)
        if value:
            settings[name] = value
    for name in settings:
        if name in RESERVED:
            raise KafkaConfigError(f"kafka.{name} is set by capture itself and cannot be configured")
        if name not in KafkaConsumer.DEFAULT_CONFIG:
            raise KafkaConfigError(f"kafka.{name} is not a kafka-python consumer setting")
    return {name: _coerce(name, value) for name, value in settings.items()}


def _coerce(name: str, value: Any) -> Any:
    """Environment values are strings; give them the type of kafka-python's default."""
    default = KafkaConsumer.DEFAULT_CONFIG[name]
    if not isinstance(value, str) or isinstance(default, str) or default is None:
        return value
    if isinstance(default, bool):
        if value.lower() in ("true", "1", "yes"):
            return True
        if value.lower() in ("false", "0", "no"):
            return False
        raise KafkaConfigError(f"kafka.{name}: expected true or false, got {value!r}")
    if isinstance(default, int):
        try:
            return int(value)
        except ValueError:
            raise KafkaConfigError(f"kafka.{name}: expected an integer, got {value!r}") from None
    return value


def is_secret(name: str) -> bool:
    return any(marker in name for marker in SECRET_MARKERS)


def redact(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as they may be printed: secret values replaced by ``***``."""
    return {name: (REDACTED if is_secret(name) and value is not None else value)
            for name, value in settings.items()}
