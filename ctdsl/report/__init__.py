"""Reports of a solution: tables (rich, Markdown, CSV), JSON, LaTeX, HTML, explanations."""
