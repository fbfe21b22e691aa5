"""Tables 1 and 2 as Markdown and LaTeX (booktabs), from the model and the config."""

from replication.io import log_to, write_text
from replication.papers.local_to_global.transformer.tables import table1, table2, to_latex, to_markdown

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
tables = {
    "table1": (table1(settings), "Parameters of the single-layer transformer.", "tab:l2g-parameters"),
    "table2": (table2(settings), "Training settings of Figs. 3, 4 and 6.", "tab:l2g-settings"),
}
for name, (frame, caption, label) in tables.items():
    log.info("%s:\n%s", name, frame.to_string(index=False))
    write_text(to_markdown(frame), snakemake.output[f"{name}_md"])
    write_text(to_latex(frame, caption, label), snakemake.output[f"{name}_tex"])
