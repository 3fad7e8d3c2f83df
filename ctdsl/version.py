"""ctdsl's version: at the bottom of the layers, so that every layer that prints it (the report's
footer, the LaTeX header, the language server, `ctdsl --version`) imports it downwards."""

__version__ = "0.1.0"
