"""Pathway-induced MKL (Manica et al. 2019): cohorts, pathway induction,
EasyMKL, Algorithms S1/S2 (``protocol``) and the Fig. 3 panels
(``figures``).
"""
