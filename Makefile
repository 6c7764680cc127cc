# offsetlake: `make demo` and `make test` each do all the set-up they need on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CACHE  ?= $(CURDIR)/.cache
JARS   := $(CACHE)/jars
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: setup demo test jars kafka bench clean

setup: $(STAMP) $(JARS)/.fetched

# The venv is (re)built when pyproject.toml changes.
$(STAMP): pyproject.toml
	@echo "setup: creating $(VENV) and installing offsetlake with its dev and airflow extras"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,airflow]'
	touch $@

# Delta Lake jars from Maven Central, so Spark sessions start offline afterwards.
$(JARS)/.fetched: build/delta/pom.xml
	@echo "setup: fetching Delta Lake jars into $(JARS)"
	mvn -q -f build/delta/pom.xml dependency:copy-dependencies \
	    -DexcludeTransitive=true -DoutputDirectory=$(JARS)
	touch $@

jars: $(JARS)/.fetched

# Apache Kafka broker and tool jars for the integration suite.
kafka:
	OFFSETLAKE_CACHE=$(CACHE) bash build/kafka/fetch.sh

demo: setup
	$(VENV)/bin/offsetlake demo

test: setup kafka
	$(PY) -m pytest $(PYTEST_ARGS)

# Throughput and memory at 2M and 10M records (snapshots cached under .cache/bench), then a table.
# The codec/segment micro-benchmarks stay in bench/run_all.py.
bench: setup kafka
	$(PY) -m bench --records 2000000 --json $(CACHE)/bench/result-2000000.json
	$(PY) -m bench --records 10000000 --json $(CACHE)/bench/result-10000000.json
	$(PY) -m bench --table $(CACHE)/bench/result-2000000.json $(CACHE)/bench/result-10000000.json

clean:
	rm -rf $(VENV) $(CACHE) lake spark-warehouse metastore_db
