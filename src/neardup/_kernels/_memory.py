"""Unaligned little-endian loads and stores, a full 64x64-bit multiply and a prefetch hint, as
LLVM intrinsics.

numba reads a uint64 out of a byte array as eight loads, shifts and ORs, and has no 128-bit
integer; both are the inner loop of XXH3. These emit one load and one ``mul`` instead. Callers
keep every read inside the array: these do no bounds check.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_BIG_ENDIAN = sys.byteorder == "big"


def _load_le(width: int) -> Callable[..., Any]:
    @intrinsic
    def load(typingctx, array, index):
        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            pointer = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(width).as_pointer())
            value = builder.load(pointer, align=1)
            if _BIG_ENDIAN:
                value = builder.bswap(value)
            return builder.zext(value, ir.IntType(64)) if width < 64 else value

        return types.uint64(array, index), codegen

    return load


load_u64 = _load_le(64)
"""``load_u64(buf, i)``: bytes ``buf[i:i + 8]`` (uint8 array) as a little-endian uint64."""

load_u32 = _load_le(32)
"""``load_u32(buf, i)``: bytes ``buf[i:i + 4]`` (uint8 array) as a little-endian uint64."""


@intrinsic
def store_u64(typingctx, array, index, value):
    """``store_u64(buf, i, v)``: write uint64 ``v`` little-endian to bytes ``buf[i:i + 8]``."""

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        pointer = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(64).as_pointer())
        value = builder.bswap(args[2]) if _BIG_ENDIAN else args[2]
        builder.store(value, pointer, align=1)
        return context.get_dummy_value()

    return types.void(array, index, types.uint64), codegen


@intrinsic
def mul128_fold64(typingctx, a, b):
    """The 128-bit product of two uint64: its high half XOR its low half."""

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        low = builder.trunc(product, ir.IntType(64))
        high = builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
        return builder.xor(low, high)

    return types.uint64(types.uint64, types.uint64), codegen


@intrinsic
def prefetch(typingctx, array, row, column):
    """Start loading the cache line of ``array[row, column]`` (a 2-d array) without waiting for
    it: a hint, so an address past the end is harmless (prefetches never fault)."""

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer2(
            context,
            builder,
            data=view.data,
            shape=cgutils.unpack_tuple(builder, view.shape),
            strides=cgutils.unpack_tuple(builder, view.strides),
            layout=array_type.layout,
            inds=[args[1], args[2]],
            wraparound=False,
        )
        byte_pointer = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]),
            "llvm.prefetch.p0i8",
        )
        # read, keep in all cache levels, data cache
        builder.call(
            hint,
            [
                builder.bitcast(pointer, byte_pointer),
                ir.Constant(int32, 0),
                ir.Constant(int32, 3),
                ir.Constant(int32, 1),
            ],
        )
        return context.get_dummy_value()

    return types.void(array, types.int64, types.int64), codegen


@intrinsic
def byte_pointer(typingctx, array, index):
    """``byte_pointer(buf, i)``: the address of ``buf[i]`` (a uint8 array) as a pointer that
    indexes like the array, ``p[j]`` being ``buf[i + j]``. numba counts references to an array
    each time a helper is handed it (an atomic add and a call, unpruned where the helper
    branches), which made the log masks 2x slower; a pointer is not counted. The caller keeps
    ``buf`` alive while the pointer is in use (use it after, in the same loop) and every index
    inside it: no bounds check."""

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.gep(data, [args[1]])

    return types.CPointer(types.uint8)(array, types.int64), codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """The number of trailing zero bits of a nonzero uint64 (one ``tzcnt``)."""

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.uint64(types.uint64), codegen


if numba.config.DISABLE_JIT:
    # NUMBA_DISABLE_JIT=1 runs the kernels as Python (for coverage and debugging); intrinsics
    # exist only in compiled code, so plain equivalents stand in.
    def load_u64(buf, i):
        return np.uint64(int.from_bytes(bytes(buf[i : i + 8]), "little"))

    def load_u32(buf, i):
        return np.uint64(int.from_bytes(bytes(buf[i : i + 4]), "little"))

    def store_u64(buf, i, v):
        buf[i : i + 8] = np.frombuffer(int(v).to_bytes(8, "little"), dtype=np.uint8)

    def mul128_fold64(a, b):
        product = int(a) * int(b)
        return np.uint64((product ^ (product >> 64)) & (2**64 - 1))

    def prefetch(array, row, column):
        pass

    def trailing_zeros(x):
        x = int(x)
        return np.uint64((x & -x).bit_length() - 1)

    def byte_pointer(array, index):
        return array[index:]


@intrinsic
def copy_from_address(typingctx, array, index, address, length):
    """``copy_from_address(buf, i, address, n)``: copy ``n`` bytes from the raw ``address`` to
    ``buf[i:i + n]``. The caller vouches for the address: that ``n`` bytes live there, and
    stay alive and unchanged while the copy runs."""

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        source = builder.inttoptr(args[2], cgutils.voidptr_t)
        cgutils.raw_memcpy(builder, builder.gep(data, [args[1]]), source, args[3], 1)
        return context.get_dummy_value()

    return types.void(array, index, address, length), codegen
