"""worldspec: define alien worlds declaratively and measure how well AI systems explore them."""

__version__ = "0.1.0"
