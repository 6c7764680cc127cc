"""Test support: the scenario builder, snapshot factories and the KIP-848 case-study notation.

Not shipped in the wheel; tests import it as ``support``.
"""
