"""The one compiled module, ``kraft.records._native_decode`` (the project's metadata is in
pyproject.toml). It is optional: where it cannot be built (no C compiler or no Python headers) the
install still succeeds and kraft decodes records in pure Python, only slower; the test suite fails
in that case (``tests/unit/records/test_native_decode.py``), so CI proves it is built."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kraft.records._native_decode",
            sources=["src/kraft/records/_native_decode.c"],
            optional=True,
        )
    ]
)
