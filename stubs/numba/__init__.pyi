# Type stubs for the part of numba the package uses (numba ships none): a jitted function keeps
# the signature of the Python function it compiles, so its callers are checked against it.
from collections.abc import Callable
from typing import Any, TypeVar, overload

_F = TypeVar("_F", bound=Callable[..., Any])

@overload
def njit(func: _F, /) -> _F: ...
@overload
def njit(*, cache: bool = ..., inline: str = ..., **options: Any) -> Callable[[_F], _F]: ...
def __getattr__(name: str) -> Any: ...
