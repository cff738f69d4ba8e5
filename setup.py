"""The optional C extension (``pbtools._tokens``, the tokenizer of clean run files); all other
metadata is in pyproject.toml. Without a C compiler the build skips it and pbtools reads run
files with pyarrow alone (the same results: ``pbtools.native``)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pbtools._tokens",
            ["pbtools/_tokens.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
