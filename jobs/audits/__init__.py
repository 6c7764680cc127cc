"""Audits (pure Python, no Spark): fencing and downgrade-readiness rules over replayed groups.

Every rule is declared once in the registry; findings share one contract (``jobs.lake``).
"""
