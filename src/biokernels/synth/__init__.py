"""biokernels.synth"""
