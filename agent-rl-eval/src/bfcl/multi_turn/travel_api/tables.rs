//! `TravelAPI`'s fixed tables: route base costs, airports, city → airport, exchange rates.

/// Base cost per directed route (departure, arrival) in the class's order.
#[rustfmt::skip]
pub(super) const ROUTES: [(&str, &str, i64); 153] = [
    ("SFO", "LAX", 200), ("SFO", "JFK", 500), ("SFO", "ORD", 400), ("SFO", "BOS", 450),
    ("SFO", "RMS", 300), ("SFO", "SBK", 350), ("SFO", "MPC", 370), ("SFO", "SVP", 320),
    ("SFO", "SHD", 330), ("SFO", "SSV", 340), ("SFO", "OKD", 360), ("SFO", "WLB", 310),
    ("SFO", "CRH", 380), ("SFO", "ATV", 390), ("SFO", "PHV", 420), ("SFO", "GFD", 430),
    ("SFO", "CIA", 700), ("LAX", "SFO", 100), ("LAX", "JFK", 600), ("LAX", "ORD", 500),
    ("LAX", "BOS", 550), ("LAX", "RMS", 310), ("LAX", "SBK", 320), ("LAX", "MPC", 330),
    ("LAX", "SVP", 340), ("LAX", "SHD", 350), ("LAX", "SSV", 360), ("LAX", "OKD", 370),
    ("LAX", "WLB", 380), ("LAX", "CRH", 390), ("LAX", "ATV", 400), ("LAX", "PHV", 410),
    ("LAX", "GFD", 420), ("LAX", "HND", 430), ("JFK", "ORD", 300), ("JFK", "BOS", 250),
    ("JFK", "RMS", 450), ("JFK", "SBK", 460), ("JFK", "MPC", 470), ("JFK", "SVP", 480),
    ("JFK", "SHD", 490), ("JFK", "SSV", 500), ("JFK", "OKD", 510), ("JFK", "WLB", 520),
    ("JFK", "CRH", 530), ("JFK", "ATV", 540), ("JFK", "PHV", 550), ("JFK", "GFD", 560),
    ("JFK", "LAX", 570), ("JFK", "HND", 800), ("JFK", "PVG", 950), ("JFK", "PEK", 1000),
    ("ORD", "LAX", 180), ("ORD", "BOS", 200), ("ORD", "RMS", 350), ("ORD", "SBK", 360),
    ("ORD", "MPC", 370), ("ORD", "SVP", 380), ("ORD", "SHD", 390), ("ORD", "SSV", 400),
    ("ORD", "OKD", 410), ("ORD", "WLB", 420), ("ORD", "CRH", 430), ("ORD", "ATV", 440),
    ("ORD", "PHV", 450), ("ORD", "GFD", 460), ("BOS", "RMS", 400), ("BOS", "SBK", 410),
    ("BOS", "MPC", 420), ("BOS", "SVP", 430), ("BOS", "SHD", 440), ("BOS", "SSV", 450),
    ("BOS", "OKD", 460), ("BOS", "WLB", 470), ("BOS", "CRH", 480), ("BOS", "ATV", 490),
    ("BOS", "PHV", 500), ("BOS", "GFD", 510), ("RMS", "BOS", 200), ("RMS", "JFK", 210),
    ("RMS", "SBK", 220), ("RMS", "MPC", 230), ("RMS", "SVP", 240), ("RMS", "SHD", 250),
    ("RMS", "SSV", 260), ("RMS", "OKD", 270), ("RMS", "WLB", 280), ("RMS", "CRH", 290),
    ("RMS", "ATV", 300), ("RMS", "PHV", 310), ("RMS", "GFD", 320), ("RMS", "LAX", 330),
    ("SBK", "MPC", 200), ("SBK", "SVP", 210), ("SBK", "SHD", 220), ("SBK", "SSV", 230),
    ("SBK", "OKD", 240), ("SBK", "WLB", 250), ("SBK", "CRH", 260), ("SBK", "ATV", 270),
    ("SBK", "PHV", 280), ("SBK", "GFD", 290), ("MPC", "SVP", 210), ("MPC", "SHD", 220),
    ("MPC", "SSV", 230), ("MPC", "OKD", 240), ("MPC", "WLB", 250), ("MPC", "CRH", 260),
    ("MPC", "ATV", 270), ("MPC", "PHV", 280), ("MPC", "GFD", 290), ("SVP", "SHD", 230),
    ("SVP", "SSV", 240), ("SVP", "OKD", 250), ("SVP", "WLB", 260), ("SVP", "CRH", 270),
    ("SVP", "ATV", 280), ("SVP", "PHV", 290), ("SVP", "GFD", 300), ("SHD", "SSV", 220),
    ("SHD", "OKD", 230), ("SHD", "WLB", 240), ("SHD", "CRH", 250), ("SHD", "ATV", 260),
    ("SHD", "PHV", 270), ("SHD", "GFD", 280), ("SSV", "OKD", 240), ("SSV", "WLB", 250),
    ("SSV", "CRH", 260), ("SSV", "ATV", 270), ("SSV", "PHV", 280), ("SSV", "GFD", 290),
    ("OKD", "WLB", 230), ("OKD", "CRH", 240), ("OKD", "ATV", 250), ("OKD", "PHV", 260),
    ("OKD", "GFD", 270), ("WLB", "CRH", 250), ("WLB", "ATV", 260), ("WLB", "PHV", 270),
    ("WLB", "GFD", 280), ("CRH", "ATV", 240), ("CRH", "PHV", 250), ("CRH", "GFD", 260),
    ("CRH", "SFO", 270), ("CRH", "RMS", 280), ("CRH", "HKG", 290), ("CRH", "JFK", 300),
    ("ATV", "PHV", 230), ("ATV", "GFD", 240), ("PHV", "GFD", 220), ("LHR", "CDG", 100),
    ("OKD", "LAX", 220),
];

/// `list_all_airports()`, in the class's order.
pub(super) const AIRPORTS: [&str; 23] = [
    "RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND", "HKG",
    "CIA", "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK", "ORD", "BOS",
];

/// `get_nearest_airport_by_city`'s map.
pub(super) const CITY_AIRPORTS: [(&str, &str); 23] = [
    ("Rivermist", "RMS"),
    ("Stonebrook", "SBK"),
    ("Maplecrest", "MPC"),
    ("Silverpine", "SVP"),
    ("Shadowridge", "SHD"),
    ("London", "LHR"),
    ("Paris", "CDG"),
    ("Sunset Valley", "SSV"),
    ("Oakendale", "OKD"),
    ("Willowbend", "WLB"),
    ("Crescent Hollow", "CRH"),
    ("Autumnville", "ATV"),
    ("Pinehaven", "PHV"),
    ("Greenfield", "GFD"),
    ("San Francisco", "SFO"),
    ("Los Angeles", "LAX"),
    ("New York", "JFK"),
    ("Chicago", "ORD"),
    ("Boston", "BOS"),
    ("Beijing", "PEK"),
    ("Hong Kong", "HKG"),
    ("Rome", "CIA"),
    ("Tokyo", "HND"),
];

/// A rate: an `int` or a `float` in the Python table (the product's type follows it).
#[derive(Debug, Clone, Copy)]
pub(super) enum Rate {
    /// An integer rate.
    Int(i64),
    /// A fractional rate.
    Float(f64),
}

/// `compute_exchange_rate`'s table: one US dollar in each currency, in the class's order.
pub(super) const EXCHANGE_RATES: [(&str, &str, Rate); 10] = [
    ("USD", "RMB", Rate::Int(7)),
    ("USD", "EUR", Rate::Float(0.8)),
    ("USD", "JPY", Rate::Int(110)),
    ("USD", "GBP", Rate::Float(0.7)),
    ("USD", "CAD", Rate::Float(1.3)),
    ("USD", "AUD", Rate::Float(1.4)),
    ("USD", "INR", Rate::Int(70)),
    ("USD", "RUB", Rate::Int(60)),
    ("USD", "BRL", Rate::Float(3.8)),
    ("USD", "MXN", Rate::Int(20)),
];
