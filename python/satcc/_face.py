"""What `satcc` itself does as a module: the notebook API loads when first used, and the names
`satcc.analyze` and `satcc.campaign` stay callable once Python binds them to the packages of
those names.

`satcc/__init__.py` (the package's face) hands its module this class and imports nothing else:
every import of a satcc module runs the face first (`from satcc import _native` included), so
the face must not reach the API; this module, above the API, does (docs/architecture.md).
"""

from __future__ import annotations

import types

API = ("Result", "analyze", "campaign", "open_store", "run", "sweep")  # satcc.api's on `satcc`


class Package(types.ModuleType):
    """The module `satcc`."""

    def __getattr__(self, name: str) -> object:
        # `import satcc` stays light (the CLI imports it first); the API loads when used.
        if name == "__version__":  # one place: Cargo.toml's workspace version (docs/packaging.md)
            from satcc import _native

            return _native.version()
        if name in API:
            from satcc import api

            return getattr(api, name)
        raise AttributeError(f"module 'satcc' has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        # the lazily loaded API shows in dir(satcc) and tab completion
        return sorted(set(self.__dict__) | {"__version__", *API})

    def __setattr__(self, name: str, value: object) -> None:
        # Importing the package satcc.analyze (satcc.campaign) binds it to `satcc.analyze`,
        # over the API function of that name: the package then answers a call as the
        # function does.
        if name in CALLABLE_PACKAGES and isinstance(value, types.ModuleType):
            value.__class__ = CallablePackage
        super().__setattr__(name, value)


CALLABLE_PACKAGES = ("analyze", "campaign")  # packages named as an API function


class CallablePackage(types.ModuleType):
    """The package `satcc.analyze` (`satcc.campaign`), which is also the API function
    `satcc.analyze(*files, **options)` (`satcc.campaign(file, ...)`)."""

    def __call__(self, *args: object, **options: object) -> object:
        from satcc import api

        return getattr(api, self.__name__.rsplit(".", 1)[-1])(*args, **options)
