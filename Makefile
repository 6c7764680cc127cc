# offsetlake: `make demo` and `make test` each do all the set-up they need on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CACHE  ?= $(CURDIR)/.cache
JARS   := $(CACHE)/jars
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: setup demo check test lint faults jars kafka bench clean chromium prerequisites

setup: $(STAMP) $(JARS)/.fetched $(VENV)/.class-archive

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

# A class-data-sharing archive of the classes a run loads (jobs/runtime/cds.py): one sample run,
# about 40 s. Optional: without it local runs take a few seconds longer, nothing else changes.
$(VENV)/.class-archive: $(STAMP) $(JARS)/.fetched
	@echo "setup: recording the classes a run loads (a class-data-sharing archive)"
	-$(PY) -m jobs.runtime.cds
	touch $@

# Apache Kafka broker and tool jars for the integration suite, the older brokers the downgrade
# comparison starts (<downgrade.versions> in build/kafka/pom.xml) and the newer ones whose
# snapshots it loads (<writer.versions>); Kafka Streams of the suite's release and of each writer
# release, for the Streams application the suite compiles (tests/integration/test_streams_app.py).
kafka: $(JARS)/.fetched
	OFFSETLAKE_CACHE=$(CACHE) bash build/kafka/fetch.sh
	OFFSETLAKE_CACHE=$(CACHE) bash build/kafka/fetch.sh --downgrade
	OFFSETLAKE_CACHE=$(CACHE) bash build/kafka/fetch.sh --writers
	OFFSETLAKE_CACHE=$(CACHE) bash build/kafka/fetch.sh --rolling
	OFFSETLAKE_CACHE=$(CACHE) bash build/streams/fetch.sh
	OFFSETLAKE_CACHE=$(CACHE) bash build/streams/fetch.sh $$(sed -n 's:.*<writer.versions>\(.*\)</writer.versions>.*:\1:p' build/kafka/pom.xml)

demo: setup
	$(VENV)/bin/offsetlake demo

# Test tiers (markers given by tests/conftest.py, described in pyproject.toml and the README):
#   make check   lint + the `unit` tier: no JVM, no broker, no Airflow; under 2 minutes on 2 cores
#   make test    lint + everything: two legs side by side, each one pytest run of part of the
#                main suite (all but `faults`) and part of the fault suite
#   make faults  the fault suite alone
# One tier by hand: .venv/bin/python -m pytest -m spark (or submit, airflow, integration, oracle).

# The fast inner loop. Only the venv is needed (no jars, Kafka or Chromium). The `java` first on
# the path refuses to start, so a test in this tier that would start a JVM fails, saying so.
NO_JVM := $(CURDIR)/tests/support/no_jvm
check: lint
	JAVA_HOME=$(NO_JVM) PATH=$(NO_JVM)/bin:$$PATH $(PY) -m pytest -m unit $(PYTEST_ARGS)

# Lint first (ruff, configured in pyproject.toml), then every test as two legs side by side, one
# per core (build/run_tests.sh): the broker tests, then part of the fault suite; beside them the
# rest of the main suite and the rest of the fault suite (each leg one pytest run, which selects
# the `faults` marker that pyproject.toml deselects by default). Each leg ends with its 40 slowest
# tests (setup and call apart), so where the suite spends its time can be read from any CI log.
test: prerequisites lint
	bash build/run_tests.sh $(PY) $(PYTEST_ARGS)

# Everything `make test` needs, side by side: on a fresh clone the venv's install (about 5 min),
# the Kafka jars (about 75 s) and Chromium are mostly downloads, each waiting on its own. The two
# Maven fetches run one after the other (kafka waits for jars): Maven 3.8's local repository is
# not safe for two processes writing it at once.
prerequisites:
	$(MAKE) --no-print-directory -j3 --output-sync=target setup kafka chromium

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The fault suite alone (tests/faults, marker `faults`; `make test` runs it in two parts, each in
# the pytest run of one leg):
# about 15 min on 2 cores. Mounting the small full filesystem needs root; without it that case is skipped.
faults: setup
	$(PY) -m pytest -m faults tests/faults $(PYTEST_ARGS)

# Throughput and memory at 2M and 10M records (snapshots cached under .cache/bench), then a table.
# The codec/segment micro-benchmarks stay in bench/run_all.py.
bench: setup kafka
	$(PY) -m bench --records 2000000 --floor --json $(CACHE)/bench/result-2000000.json
	$(PY) -m bench --records 10000000 --floor --json $(CACHE)/bench/result-10000000.json
	$(PY) -m bench --table $(CACHE)/bench/result-2000000.json $(CACHE)/bench/result-10000000.json

clean:
	rm -rf $(VENV) $(CACHE) lake spark-warehouse metastore_db

# Headless Chromium (Debian package) for the report's rendering test (tests/test_report.py).
# build/apt_install.sh waits for another apt or dpkg process's lock instead of failing at once.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	    echo "setup: installing chromium (Debian package) for the report test"; \
	    $(SUDO) bash build/apt_install.sh chromium; }
