//! Appending positions to a Flex key/value cache in place.
//!
//! A cache tensor `[batch, heads, len, dim]` is kept as a view into a buffer with room for
//! `capacity >= len` positions per head (strides `[heads * capacity * dim, capacity * dim, dim,
//! 1]`). While the buffer has room and nothing else holds it, a decode step writes its new
//! positions into the free rows instead of concatenating (which copied the whole cache every
//! step); otherwise the cache moves once into a buffer twice as long.

use burn::tensor::Shape;
use burn_flex::{FlexTensor, Layout};

use super::flex::{contiguous, shape_of, values};

/// Positions per head that `cache` has room for, when it is a view of such a buffer.
fn capacity(cache: &FlexTensor) -> Option<usize> {
    let layout = cache.layout();
    let shape = layout.shape();
    let [heads, dim] = [shape[1], shape[3]];
    let strides = layout.strides();
    let row = isize::try_from(dim).ok()?;
    let fits = layout.start_offset() == 0
        && strides[3] == 1
        && strides[2] == row
        && strides[1] > 0
        && strides[1] % row == 0
        && strides[0] == strides[1] * heads as isize;
    let capacity = (strides[1] / row) as usize;
    (fits && cache.bytes().len() == shape[0] * heads * capacity * dim * size_of::<f32>())
        .then_some(capacity)
}

/// `cache` (`[batch, heads, len, dim]`) with `new` (`[batch, heads, count, dim]`) appended along
/// the positions.
pub(super) fn append(mut cache: FlexTensor, new: &FlexTensor) -> FlexTensor {
    let shape = shape_of(&cache);
    let [batch, heads, len, dim] = [shape[0], shape[1], shape[2], shape[3]];
    let count = shape_of(new)[2];
    let new = contiguous(new);
    let total = len + count;
    let room = capacity(&cache).filter(|&capacity| capacity >= total);
    let (capacity, mut buffer) = match room {
        Some(capacity) if cache.is_unique() => (capacity, cache),
        _ => {
            let capacity = total.next_power_of_two().max(16);
            let mut data = vec![0.0f32; batch * heads * capacity * dim];
            let old = contiguous(&cache);
            if len * dim > 0 {
                for (block, rows) in values(&old).chunks_exact(len * dim).enumerate() {
                    let start = block * capacity * dim;
                    data[start..start + rows.len()].copy_from_slice(rows);
                }
            }
            cache = FlexTensor::from_data(burn::tensor::TensorData::new(
                data,
                [batch, heads, capacity, dim],
            ));
            (capacity, cache)
        }
    };
    let storage = buffer.storage_mut::<f32>();
    if count * dim > 0 {
        for (block, rows) in values(&new).chunks_exact(count * dim).enumerate() {
            let start = (block * capacity + len) * dim;
            storage[start..start + rows.len()].copy_from_slice(rows);
        }
    }
    let stride = |n: usize| n as isize;
    buffer.with_layout(Layout::new(
        Shape::from(vec![batch, heads, total, dim]),
        vec![
            stride(heads * capacity * dim),
            stride(capacity * dim),
            stride(dim),
            1,
        ],
        0,
    ))
}
