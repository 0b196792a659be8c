"""Turns Python values (numpy, pandas and datetime ones included) into plain JSON values.

NaN and infinities become null: the protocol and the SDKs parse strict JSON.
"""

import datetime
import decimal
import math


class NotJsonable(TypeError):
    pass


def jsonable(value, fallback=None):
    """The JSON value for `value`. Values with no JSON form go through `fallback` (for
    example `str`); with no fallback they raise NotJsonable."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(key): jsonable(item, fallback) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item, fallback) for item in value]
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return jsonable(float(value), fallback)
    converted = numpy_or_pandas_value(value)
    if converted is not value:
        return jsonable(converted, fallback)
    if fallback is not None:
        return fallback(value)
    raise NotJsonable(f"{type(value).__name__} has no JSON form")


def numpy_or_pandas_value(value):
    """A plainer value for numpy and pandas scalars and arrays, or `value` itself."""
    module = type(value).__module__ or ""
    if not (module.startswith("numpy") or module.startswith("pandas")):
        return value
    type_name = type(value).__name__
    if type_name in ("NaTType", "NAType"):
        return None
    if type_name in ("datetime64", "timedelta64"):
        import numpy

        if numpy.isnat(value):
            return None
        return str(value) if type_name == "timedelta64" else numpy.datetime_as_string(value)
    if hasattr(value, "tolist"):
        # numpy arrays and scalars, pandas Series and Index
        return value.tolist()
    return value
