# numpy dtype <-> ggml_type mapping, shared by the front ends (the eager numpy-style API,
# the graph API): conversions between numpy and ggml happen in the front ends only.
#
# cimport and use: `from ggml_cy.core._dtypes cimport ggml_type_of_typenum, typenum_of_ggml_type`.
# Both are inline, so a module using them needs no import of ggml_cy.core._dtypes at run time.
#
# A numpy dtype maps to a ggml type only when it is in native byte order (callers check
# `PyDataType_ISNOTSWAPPED`); bfloat16 has no numpy dtype and is stored as uint16, so
# typenum_of_ggml_type(GGML_TYPE_BF16) is NPY_UINT16 while NPY_UINT16 itself maps to -1
# (plain uint16 data is not bfloat16 unless the caller says so).
cimport numpy as cnp
from ggml_cy.core._core cimport (GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_I8, GGML_TYPE_I16,
                            GGML_TYPE_I32, GGML_TYPE_I64, GGML_TYPE_F64, GGML_TYPE_BF16,
                            GGML_TYPE_U8, GGML_TYPE_BOOL)

cdef extern from "numpy/arrayobject.h":
    enum:
        NPY_HALF_TYPENUM "NPY_HALF"     # numpy's .pxd lacks NPY_HALF


# ggml type of a numpy type number, or -1 when ggml_cy has no such type (uint16/32/64,
# complex, long double, object, strings, datetimes, user dtypes).
cdef inline int ggml_type_of_typenum(int typenum) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        return GGML_TYPE_F32
    if typenum == cnp.NPY_DOUBLE:
        return GGML_TYPE_F64
    if typenum == NPY_HALF_TYPENUM:
        return GGML_TYPE_F16
    if typenum == cnp.NPY_BOOL:
        return GGML_TYPE_BOOL
    if typenum == cnp.NPY_BYTE:
        return GGML_TYPE_I8
    if typenum == cnp.NPY_UBYTE:
        return GGML_TYPE_U8
    if typenum == cnp.NPY_SHORT:
        return GGML_TYPE_I16 if sizeof(short) == 2 else -1
    if typenum == cnp.NPY_INT:
        return GGML_TYPE_I32 if sizeof(int) == 4 else -1
    if typenum == cnp.NPY_LONG:
        # 8 bytes on LP64 (Linux, macOS), 4 on Windows
        if sizeof(long) == 8:
            return GGML_TYPE_I64
        return GGML_TYPE_I32 if sizeof(long) == 4 else -1
    if typenum == cnp.NPY_LONGLONG:
        return GGML_TYPE_I64 if sizeof(long long) == 8 else -1
    return -1


# numpy type number that holds a ggml type (BF16: its uint16 storage), or -1.
cdef inline int typenum_of_ggml_type(int type) noexcept nogil:
    if type == GGML_TYPE_F32:
        return cnp.NPY_FLOAT
    if type == GGML_TYPE_F64:
        return cnp.NPY_DOUBLE
    if type == GGML_TYPE_F16:
        return NPY_HALF_TYPENUM
    if type == GGML_TYPE_BF16:
        return cnp.NPY_USHORT
    if type == GGML_TYPE_BOOL:
        return cnp.NPY_BOOL
    if type == GGML_TYPE_I8:
        return cnp.NPY_BYTE
    if type == GGML_TYPE_U8:
        return cnp.NPY_UBYTE
    if type == GGML_TYPE_I16:
        return cnp.NPY_SHORT
    if type == GGML_TYPE_I32:
        return cnp.NPY_INT
    if type == GGML_TYPE_I64:
        return cnp.NPY_INT64
    return -1
