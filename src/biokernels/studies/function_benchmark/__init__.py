"""Protein function prediction benchmark (beyond the papers): diffusion kernels and
their learned combinations (Sun, Ji & Ye 2008) beside label propagation
(Zhu et al. 2003; Zhou et al. 2004) and Mashup (Cho, Berger & Peng 2016) on
Mashup's yeast STRING channels with MIPS FunCat levels 1-3, and on the von
Mering network, under deepNF's protocol (Gligorijevic, Barot & Bonneau
2018): seeded trials holding out a fraction of the annotated genes,
hyperparameters by inner CV on the training genes only (micro-AUPR), one
classifier per term.

Modules, imports going down: ``run -> selection -> kernels, mashup,
propagation -> metrics, splits, data``; ``tables`` reads ``run``'s output.
No Snakemake import.
"""
