"""Untrusted search for certificates, and their files beside the proofs.

Nothing here can make a step verified: the kernel's checker (kernel/certificates.py) replays
every certificate it is given.  ``search.find_certificate`` finds one for an obligation's
statement (Z3's unsat cores choose the facts and the cases, an LP solved by HiGHS finds
Positivstellensatz multipliers, solved again exactly on the LP's support); ``store`` reads and
writes the certificate files (imported by the checker, so it needs neither Z3 nor SciPy).
"""
