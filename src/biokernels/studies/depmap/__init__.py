"""DepMap viability by projection (Radhakrishnan et al. 2023, SI Fig. S9):
the drug screen's source model projected onto viability (``protocol``) and
the curves' tables (``tables``).
"""
