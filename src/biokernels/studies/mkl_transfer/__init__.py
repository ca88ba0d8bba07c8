"""Transfer versus multiple kernel learning (Radhakrishnan et al. 2023,
SI Fig. S7).
"""
