"""LS-MMDT (Rodner et al. 2013): the digits and cohort domain-adaptation
tasks around ``biokernels.solvers.mmdt``.
"""
