"""Application wiring: typed configuration from ``conf/``, the Spark session factory, and Kafka
client settings (secrets from the environment only)."""
