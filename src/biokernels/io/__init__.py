"""biokernels.io"""
