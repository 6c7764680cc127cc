"""Where snapshots come from: a live cluster (:mod:`jobs.snapshots.capture`, kafka-python) or
copies of a broker's segment directories (read by ``decoders.log``)."""
