//! Reaching a concrete backend from generic code: a value whose type is known only as a type
//! parameter is moved into the concrete type when the two are the same type (checked by
//! `TypeId`, in safe code), and handed back unchanged otherwise.

use std::any::Any;

/// `value` as a `U` when `T` is `U`; `Err(value)` otherwise.
pub(super) fn downcast<T: 'static, U: 'static>(value: T) -> Result<U, T> {
    let mut slot = Some(value);
    let moved = (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<U>>()
        .and_then(Option::take);
    match (moved, slot) {
        (Some(value), _) => Ok(value),
        (None, Some(value)) => Err(value),
        (None, None) => unreachable!("the value is only taken when the types match"),
    }
}

/// `value` back as the generic type it was downcast from (`T` is `U`).
pub(super) fn upcast<T: 'static, U: 'static>(value: T) -> U {
    downcast(value).unwrap_or_else(|_| unreachable!("upcast is only called on a downcast type"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downcast_moves_only_between_equal_types() {
        assert_eq!(downcast::<u32, u32>(7), Ok(7));
        assert_eq!(downcast::<u32, i32>(7), Err(7));
        assert_eq!(upcast::<(u8, u8), (u8, u8)>((1, 2)), (1, 2));
    }
}
