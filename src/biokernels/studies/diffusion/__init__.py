"""Diffusion-kernel MKL on protein networks (Sun, Ji & Ye 2008): the
study's inputs (``data``) and its protocol: splits, mDKL and the
baselines, tables (``protocol``).
"""
