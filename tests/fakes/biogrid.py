"""BioGRID's TAB3 layout (the 37 columns of the 3.x/4.x releases), for the
tests and the readers' benchmark."""

from __future__ import annotations

TAB3_COLUMNS = [
    "#BioGRID Interaction ID", "Entrez Gene Interactor A", "Entrez Gene Interactor B", "BioGRID ID Interactor A",
    "BioGRID ID Interactor B", "Systematic Name Interactor A", "Systematic Name Interactor B",
    "Official Symbol Interactor A", "Official Symbol Interactor B", "Synonyms Interactor A",
    "Synonyms Interactor B", "Experimental System", "Experimental System Type", "Author", "Publication Source",
    "Organism ID Interactor A", "Organism ID Interactor B", "Throughput", "Score", "Modification",
    "Qualifications", "Tags", "Source Database", "SWISS-PROT Accessions Interactor A",
    "TREMBL Accessions Interactor A", "REFSEQ Accessions Interactor A", "SWISS-PROT Accessions Interactor B",
    "TREMBL Accessions Interactor B", "REFSEQ Accessions Interactor B", "Ontology Term IDs",
    "Ontology Term Names", "Ontology Term Categories", "Ontology Term Qualifier IDs",
    "Ontology Term Qualifier Names", "Ontology Term Types", "Organism Name Interactor A",
    "Organism Name Interactor B",
]
assert len(TAB3_COLUMNS) == 37
