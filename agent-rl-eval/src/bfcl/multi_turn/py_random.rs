//! CPython's `random.Random` seeded with an integer: the Mersenne Twister (MT19937) with
//! CPython's `init_by_array` seeding, and the `getrandbits`, `randint` and `uniform` built on it,
//! so that ids, tokens and readings the backends draw equal the Python classes' draws.

const N: usize = 624;
const M: usize = 397;

/// A `random.Random(seed)` generator.
#[derive(Debug, Clone)]
pub struct PyRandom {
    state: Box<[u32; N]>,
    index: usize,
}

impl PyRandom {
    /// `random.Random(seed)` for an integer seed (its absolute value, as CPython).
    pub fn new(seed: i64) -> Self {
        let magnitude = seed.unsigned_abs();
        let mut key = vec![magnitude as u32];
        if magnitude >> 32 != 0 {
            key.push((magnitude >> 32) as u32);
        }
        let mut generator = Self {
            state: Box::new([0; N]),
            index: N,
        };
        generator.init_by_array(&key);
        generator
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..N {
            let previous = self.state[i - 1];
            self.state[i] = 1_812_433_253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i]
                ^ (previous ^ (previous >> 30)).wrapping_mul(1_566_083_941))
            .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
        }
        self.state[0] = 0x8000_0000;
    }

    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % N] & 0x7fff_ffff);
            let mut next = self.state[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= 0x9908_b0df;
            }
            self.state[i] = next;
        }
        self.index = 0;
    }

    /// The next 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(bits)` for `1..=64` bits (32-bit words, least significant first).
    pub fn getrandbits(&mut self, bits: u32) -> u64 {
        let mut value = 0u64;
        let mut remaining = bits;
        let mut shift = 0;
        while remaining > 0 {
            let mut word = u64::from(self.next_u32());
            if remaining < 32 {
                word >>= 32 - remaining;
            }
            value |= word << shift;
            shift += 32;
            remaining = remaining.saturating_sub(32);
        }
        value
    }

    /// `randint(low, high)`: `low + _randbelow(high - low + 1)` by rejection sampling.
    ///
    /// # Panics
    /// When `high < low` (callers pass constant ranges).
    pub fn randint(&mut self, low: i64, high: i64) -> i64 {
        assert!(high >= low, "randint needs low <= high");
        let span = (high - low) as u64 + 1;
        let bits = 64 - span.leading_zeros();
        loop {
            let draw = self.getrandbits(bits);
            if draw < span {
                return low + draw as i64;
            }
        }
    }

    /// `random()`: 53 random bits as a float in `[0, 1)`.
    pub fn random(&mut self) -> f64 {
        let high = f64::from(self.next_u32() >> 5);
        let low = f64::from(self.next_u32() >> 6);
        (high * 67_108_864.0 + low) / 9_007_199_254_740_992.0
    }

    /// `uniform(low, high)`: `low + (high - low) * random()`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.random()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by CPython 3.11:
    /// `r = random.Random(200191); [r.randint(10000, 99999) for _ in range(3)]`,
    /// `random.Random(141053).uniform(-10.0, 40.0)`, and
    /// `random.Random(141053).randint(100000000000, 999999999999)`.
    #[test]
    fn draws_equal_cpython() {
        let mut message = PyRandom::new(200_191);
        let ids: Vec<i64> = (0..3).map(|_| message.randint(10_000, 99_999)).collect();
        assert_eq!(ids, PY_MESSAGE_IDS);
        assert_eq!(PyRandom::new(141_053).uniform(-10.0, 40.0), PY_UNIFORM);
        assert_eq!(
            PyRandom::new(141_053).randint(100_000_000_000, 999_999_999_999),
            PY_WIDE
        );
        assert_eq!(PyRandom::new(0).next_u32(), PY_ZERO_SEED_FIRST_WORD);
    }

    const PY_MESSAGE_IDS: [i64; 3] = [67410, 41772, 24547];
    const PY_UNIFORM: f64 = 36.63485703790535;
    const PY_WIDE: i64 = 262_919_693_687;
    const PY_ZERO_SEED_FIRST_WORD: u32 = 3_626_764_237;
}
