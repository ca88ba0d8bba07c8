# biokernels: kernel methods for biology, one Snakemake workflow.
# Studies live in rules/*.smk; every figure and table is a named target rule
# (see the README's target list). `snakemake -n` shows the DAG of `all`.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/demo.smk"
include: "rules/diffusion_mkl.smk"
include: "rules/theory.smk"
include: "rules/drug_screen.smk"
include: "rules/depmap.smk"
include: "rules/pimkl.smk"
include: "rules/mmdt.smk"
include: "rules/mkl_transfer.smk"
include: "rules/report.smk"


rule all:
    input:
        DEMO_TARGETS,
        DKL_TARGETS,
        THEORY_TARGETS,
        DS_TARGETS,
        DM_TARGETS,
        PK_TARGETS,
        MM_TARGETS,
        MT_TARGETS,
    default_target: True
