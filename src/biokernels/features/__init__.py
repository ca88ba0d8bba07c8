"""Featurizations shared by several studies and by the generators: molecular
fingerprints (RDKit) of the drug screen, DepMap and the screen generator.
"""
