"""biokernels.solvers"""
