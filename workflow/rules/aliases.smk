# The target names before the <study>_<figure> scheme, kept as aliases for one
# release: each runs exactly what its new name runs.
TARGET_ALIASES = {
    "dkl_fig1": "diffusion_fig1",
    "dkl_fig2": "diffusion_fig2",
    "dkl_fig3": "diffusion_fig3",
    "dkl_fig4": "diffusion_fig4",
    "dkl_fig5": "diffusion_fig5",
    "dkl_fig6": "diffusion_fig6",
    "dkl_fig7": "diffusion_fig7",
    "dkl_fig8": "diffusion_fig8",
    "dkl_table2": "diffusion_table2",
    "dkl_table3": "diffusion_table3",
    "dkl_table4": "diffusion_table4",
    "dkl_table5": "diffusion_table5",
    "dkl_table6": "diffusion_table6",
    "dkl_table7": "diffusion_table7",
    "dkl_sensitivity": "diffusion_sensitivity",
    "dkl_protocols": "diffusion_protocols",
    "dkl_predict": "diffusion_predict",
    "screen_fig4a": "drug_screen_fig4a",
    "screen_fig4b": "drug_screen_fig4b",
    "screen_fig4c": "drug_screen_fig4c",
    "screen_fig4d": "drug_screen_fig4d",
    "screen_fig4e": "drug_screen_fig4e",
    "screen_fig4f": "drug_screen_fig4f",
    "mkl_figS7_bio": "mkl_transfer_figS7_bio",
    "mkl_figS7": "mkl_transfer_figS7",
}


for _old, _new in TARGET_ALIASES.items():

    rule:
        f"""Alias of {_new} (the name before the <study>_<figure> scheme)."""
        name:
            _old
        input:
            getattr(rules, _new).input,
