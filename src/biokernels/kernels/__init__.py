"""biokernels.kernels"""
