//! `VehicleControlAPI`: bfcl-eval's car-control class (`vehicle_control.py`): engine, fuel,
//! doors, climate, lights, brakes, cruise control, navigation and tyres; outside temperature
//! and current speed drawn from a seeded `random.Random`.
//!
//! Long-context mode pads some answers with bfcl-eval's filler data ([`LongContextData`]);
//! without the data those calls report unsupported.

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::{LongContext, LongContextData};
use super::py_random::PyRandom;
use super::pyobject::{config_or, get_item_mut, no_attribute, order, set_item, to_float};
use super::pyops::{self, truthy};
use super::value::PyValue;

const METHODS: &[Method] = &[
    Method {
        name: "startEngine",
        params: &[required("ignitionMode")],
    },
    Method {
        name: "fillFuelTank",
        params: &[required("fuelAmount")],
    },
    Method {
        name: "lockDoors",
        params: &[required("unlock"), required("door")],
    },
    Method {
        name: "adjustClimateControl",
        params: &[
            required("temperature"),
            optional("unit", "'celsius'"),
            optional("fanSpeed", "50"),
            optional("mode", "'auto'"),
        ],
    },
    Method {
        name: "get_outside_temperature_from_google",
        params: &[],
    },
    Method {
        name: "get_outside_temperature_from_weather_com",
        params: &[],
    },
    Method {
        name: "setHeadlights",
        params: &[required("mode")],
    },
    Method {
        name: "displayCarStatus",
        params: &[required("option")],
    },
    Method {
        name: "activateParkingBrake",
        params: &[required("mode")],
    },
    Method {
        name: "pressBrakePedal",
        params: &[required("pedalPosition")],
    },
    Method {
        name: "releaseBrakePedal",
        params: &[],
    },
    Method {
        name: "setCruiseControl",
        params: &[
            required("speed"),
            required("activate"),
            required("distanceToNextVehicle"),
        ],
    },
    Method {
        name: "get_current_speed",
        params: &[],
    },
    Method {
        name: "display_log",
        params: &[required("messages")],
    },
    Method {
        name: "estimate_drive_feasibility_by_mileage",
        params: &[required("distance")],
    },
    Method {
        name: "liter_to_gallon",
        params: &[required("liter")],
    },
    Method {
        name: "gallon_to_liter",
        params: &[required("gallon")],
    },
    Method {
        name: "estimate_distance",
        params: &[required("cityA"), required("cityB")],
    },
    Method {
        name: "get_zipcode_based_on_city",
        params: &[required("city")],
    },
    Method {
        name: "set_navigation",
        params: &[required("destination")],
    },
    Method {
        name: "check_tire_pressure",
        params: &[],
    },
    Method {
        name: "find_nearest_tire_shop",
        params: &[],
    },
];

const DEFAULT_SEED: i64 = 141_053;
const MAX_FUEL_LEVEL: i64 = 50;
const MIN_FUEL_LEVEL: f64 = 0.0;
const MILE_PER_GALLON: f64 = 20.0;

/// Zip-code pairs `estimate_distance` knows (either order), with their distance.
const DISTANCES: [(&str, &str, f64); 12] = [
    ("83214", "74532", 750.0),
    ("56108", "62947", 320.0),
    ("71354", "83462", 450.0),
    ("47329", "52013", 290.0),
    ("69238", "51479", 630.0),
    ("94016", "83214", 980.0),
    ("94016", "94704", 600.0),
    ("94704", "08540", 2550.0),
    ("94016", "08540", 1950.0),
    ("62947", "47329", 1053.0),
    ("94016", "62947", 780.0),
    ("74532", "94016", 880.0),
];

/// `get_zipcode_based_on_city`'s cities.
const ZIP_CODES: [(&str, &str); 11] = [
    ("Rivermist", "83214"),
    ("Stonebrook", "74532"),
    ("Maplecrest", "56108"),
    ("Silverpine", "62947"),
    ("Shadowridge", "71354"),
    ("Sunset Valley", "83462"),
    ("Oakendale", "47329"),
    ("Willowbend", "52013"),
    ("Crescent Hollow", "69238"),
    ("Autumnville", "51479"),
    ("San Francisco", "94016"),
];

/// The `VehicleControlAPI` class (public attributes by their Python names).
#[derive(Debug, Clone)]
#[allow(non_snake_case)]
pub struct VehicleControlApi {
    random: PyRandom,
    fuelLevel: PyValue,
    batteryVoltage: PyValue,
    engine_state: PyValue,
    remainingUnlockedDoors: PyValue,
    doorStatus: PyValue,
    acTemperature: PyValue,
    fanSpeed: PyValue,
    acMode: PyValue,
    humidityLevel: PyValue,
    headLightStatus: PyValue,
    parkingBrakeStatus: PyValue,
    parking_brake_force: PyValue,
    slope_angle: PyValue,
    brakePedalStatus: PyValue,
    brake_pedal_force: PyValue,
    distanceToNextVehicle: PyValue,
    cruiseStatus: PyValue,
    destination: PyValue,
    frontLeftTirePressure: PyValue,
    frontRightTirePressure: PyValue,
    rearLeftTirePressure: PyValue,
    rearRightTirePressure: PyValue,
    long_context: LongContext,
}

impl Default for VehicleControlApi {
    fn default() -> Self {
        let mut api = Self {
            random: PyRandom::new(DEFAULT_SEED),
            fuelLevel: PyValue::None,
            batteryVoltage: PyValue::None,
            engine_state: PyValue::None,
            remainingUnlockedDoors: PyValue::None,
            doorStatus: PyValue::None,
            acTemperature: PyValue::None,
            fanSpeed: PyValue::None,
            acMode: PyValue::None,
            humidityLevel: PyValue::None,
            headLightStatus: PyValue::None,
            parkingBrakeStatus: PyValue::None,
            parking_brake_force: PyValue::None,
            slope_angle: PyValue::None,
            brakePedalStatus: PyValue::None,
            brake_pedal_force: PyValue::None,
            distanceToNextVehicle: PyValue::None,
            cruiseStatus: PyValue::None,
            destination: PyValue::None,
            frontLeftTirePressure: PyValue::None,
            frontRightTirePressure: PyValue::None,
            rearLeftTirePressure: PyValue::None,
            rearRightTirePressure: PyValue::None,
            long_context: LongContext::Off,
        };
        // The default door map is a dict, so loading the default scenario cannot fail.
        let _ = api.load(&PyValue::Dict(Vec::new()), &LongContext::Off);
        api
    }
}

fn error(text: impl Into<String>) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text.into()))])
}

fn one(key: &str, value: PyValue) -> PyValue {
    PyValue::dict([(key, value)])
}

fn float(x: f64) -> PyValue {
    PyValue::Float(x)
}

/// `low <= value <= high` (Python's chained comparison).
fn within(low: i64, value: &PyValue, high: i64) -> Result<bool, CallError> {
    Ok(order("<=", &PyValue::Int(low), value)? && order("<=", value, &PyValue::Int(high))?)
}

fn default_doors() -> PyValue {
    PyValue::dict(
        ["driver", "passenger", "rear_left", "rear_right"]
            .map(|door| (door, PyValue::str("unlocked"))),
    )
}

impl VehicleControlApi {
    fn load(&mut self, config: &PyValue, long_context: &LongContext) -> Result<(), CallError> {
        let seed = match config.get("random_seed") {
            Some(PyValue::Int(seed)) => *seed,
            _ => DEFAULT_SEED,
        };
        self.random = PyRandom::new(seed);
        let get = |key: &str, default: PyValue| config_or(config, key, default);
        self.fuelLevel = get("fuelLevel", float(0.0));
        self.batteryVoltage = get("batteryVoltage", float(12.6));
        self.engine_state = get("engineState", PyValue::str("stopped"));
        self.doorStatus = get("doorStatus", default_doors());
        let PyValue::Dict(doors) = &self.doorStatus else {
            return Err(no_attribute(&self.doorStatus, "keys"));
        };
        let locked = doors
            .iter()
            .filter(|(_, status)| *status == PyValue::str("locked"))
            .count();
        self.remainingUnlockedDoors = PyValue::Int(4 - locked as i64);
        self.acTemperature = get("acTemperature", float(25.0));
        self.fanSpeed = get("fanSpeed", PyValue::Int(50));
        self.acMode = get("acMode", PyValue::str("auto"));
        self.humidityLevel = get("humidityLevel", float(50.0));
        self.headLightStatus = get("headLightStatus", PyValue::str("off"));
        self.parkingBrakeStatus = get("parkingBrakeStatus", PyValue::str("released"));
        self.parking_brake_force = get("parkingBrakeForce", float(0.0));
        self.slope_angle = get("slopeAngle", float(0.0));
        self.brakePedalStatus = get("brakePedalStatus", PyValue::str("released"));
        self.brake_pedal_force = get("brakePedalForce", float(0.0));
        self.distanceToNextVehicle = get("distanceToNextVehicle", float(50.0));
        self.cruiseStatus = get("cruiseStatus", PyValue::str("inactive"));
        self.destination = get("destination", PyValue::str("None"));
        self.frontLeftTirePressure = get("frontLeftTirePressure", float(32.0));
        self.frontRightTirePressure = get("frontRightTirePressure", float(32.0));
        self.rearLeftTirePressure = get("rearLeftTirePressure", float(30.0));
        self.rearRightTirePressure = get("rearRightTirePressure", float(30.0));
        self.long_context = long_context.clone();
        Ok(())
    }

    fn start_engine(&mut self, mode: &PyValue) -> Result<PyValue, CallError> {
        if *mode == PyValue::str("STOP") {
            self.engine_state = PyValue::str("stopped");
        }
        if order(">", &self.remainingUnlockedDoors, &PyValue::Int(0))? {
            let unlocked: Vec<String> = match &self.doorStatus {
                PyValue::Dict(pairs) => pairs
                    .iter()
                    .filter(|(_, status)| *status == PyValue::str("unlocked"))
                    .map(|(door, _)| door.to_py_str())
                    .collect(),
                _ => Vec::new(),
            };
            return Ok(error(format!(
                "All doors must be locked before starting the engine. Here are the unlocked \
                 doors: {}",
                unlocked.join(", ")
            )));
        }
        if self.brakePedalStatus != PyValue::str("pressed") {
            return Ok(error(
                "Brake pedal needs to be pressed when starting the engine.",
            ));
        }
        if self.brake_pedal_force != float(1000.0) {
            return Ok(error(
                "Must press the brake fully before starting the engine.",
            ));
        }
        if order("<", &self.fuelLevel, &float(MIN_FUEL_LEVEL))? {
            return Ok(error("Fuel tank is empty."));
        }
        if *mode != PyValue::str("START") {
            return Ok(error("Invalid ignition mode."));
        }
        self.engine_state = PyValue::str("running");
        Ok(PyValue::dict([
            ("engineState", self.engine_state.clone()),
            ("fuelLevel", self.fuelLevel.clone()),
            ("batteryVoltage", self.batteryVoltage.clone()),
        ]))
    }

    fn fill_fuel_tank(&mut self, amount: &PyValue) -> Result<PyValue, CallError> {
        if order("<", amount, &PyValue::Int(0))? {
            return Ok(error("Fuel amount cannot be negative."));
        }
        let filled = pyops::add(&self.fuelLevel, amount)?;
        if order(">", &filled, &PyValue::Int(MAX_FUEL_LEVEL))? {
            return Ok(error("Cannot fill gas above the tank capacity."));
        }
        if order("<", &filled, &float(MIN_FUEL_LEVEL))? {
            return Ok(error("Fuel tank is empty. Min fuel level is 0 gallons."));
        }
        self.fuelLevel = filled;
        Ok(one("fuelLevel", self.fuelLevel.clone()))
    }

    fn lock_doors(&mut self, unlock: &PyValue, doors: &PyValue) -> Result<PyValue, CallError> {
        let (wanted, step) = if truthy(unlock) {
            ("unlocked", 1)
        } else {
            ("locked", -1)
        };
        for door in pyops::iterate(doors)? {
            let status = get_item_mut(&mut self.doorStatus, &door)?;
            if *status == PyValue::str(wanted) {
                continue;
            }
            *status = PyValue::str(wanted);
            self.remainingUnlockedDoors =
                pyops::add(&self.remainingUnlockedDoors, &PyValue::Int(step))?;
        }
        Ok(PyValue::dict([
            ("lockStatus", PyValue::str(wanted)),
            (
                "remainingUnlockedDoors",
                self.remainingUnlockedDoors.clone(),
            ),
        ]))
    }

    fn adjust_climate(&mut self, args: &[PyValue]) -> Result<PyValue, CallError> {
        let [temperature, unit, fan_speed, mode] = args else {
            return Err(CallError::Unsupported("argument count".into()));
        };
        if !within(0, fan_speed, 100)? {
            return Ok(error("Fan speed must be between 0 and 100."));
        }
        self.acTemperature = temperature.clone();
        if *unit == PyValue::str("fahrenheit") {
            let shifted = pyops::sub(temperature, &PyValue::Int(32))?;
            self.acTemperature =
                pyops::truediv(&pyops::mul(&shifted, &PyValue::Int(5))?, &PyValue::Int(9))?;
        }
        self.fanSpeed = fan_speed.clone();
        self.acMode = mode.clone();
        Ok(PyValue::dict([
            ("currentACTemperature", temperature.clone()),
            ("climateMode", mode.clone()),
            ("humidityLevel", self.humidityLevel.clone()),
        ]))
    }

    /// The filler data in long-context mode (`None` otherwise).
    fn filler(&self, method: &str) -> Result<Option<&LongContextData>, CallError> {
        self.long_context
            .filler(&format!("VehicleControlAPI.{method}"))
    }

    fn display_car_status(&self, option: &PyValue) -> Result<PyValue, CallError> {
        let mut fields: Vec<(&str, PyValue)> = match self.filler("displayCarStatus")? {
            Some(filler) => vec![("metadata", filler.car_status_metadata.clone())],
            None => Vec::new(),
        };
        let is = |name: &str| *option == PyValue::str(name);
        fields.extend(if is("fuel") {
            vec![("fuelLevel", self.fuelLevel.clone())]
        } else if is("battery") {
            vec![("batteryVoltage", self.batteryVoltage.clone())]
        } else if is("doors") {
            vec![("doorStatus", self.doorStatus.clone())]
        } else if is("climate") {
            vec![
                ("currentACTemperature", self.acTemperature.clone()),
                ("fanSpeed", self.fanSpeed.clone()),
                ("climateMode", self.acMode.clone()),
                ("humidityLevel", self.humidityLevel.clone()),
            ]
        } else if is("headlights") {
            vec![("headlightStatus", self.headLightStatus.clone())]
        } else if is("parkingBrake") {
            vec![
                ("parkingBrakeStatus", self.parkingBrakeStatus.clone()),
                ("parkingBrakeForce", self.parking_brake_force.clone()),
                ("slopeAngle", self.slope_angle.clone()),
            ]
        } else if is("brakePedal") {
            vec![
                ("brakePedalStatus", self.brakePedalStatus.clone()),
                ("brakePedalForce", self.brake_pedal_force.clone()),
            ]
        } else if is("engine") {
            vec![("engineState", self.engine_state.clone())]
        } else {
            vec![("error", PyValue::str("Invalid option"))]
        });
        Ok(PyValue::dict(fields))
    }

    fn parking_brake(&mut self, mode: &PyValue) -> Result<PyValue, CallError> {
        let engage = *mode == PyValue::str("engage");
        if !engage && *mode != PyValue::str("release") {
            return Ok(error("Invalid mode"));
        }
        let instruction = self
            .filler("activateParkingBrake")?
            .map(|filler| filler.parking_brake_instruction.clone());
        let (status, force) = if engage {
            ("engaged", 500.0)
        } else {
            ("released", 0.0)
        };
        self.parkingBrakeStatus = PyValue::str(status);
        self.parking_brake_force = float(force);
        self.slope_angle = float(10.0);
        let instruction = instruction.map(|text| ("parkingBrakeInstruction", text));
        Ok(PyValue::dict(instruction.into_iter().chain([
            ("parkingBrakeStatus", PyValue::str(status)),
            ("_parkingBrakeForce", float(force)),
            ("_slopeAngle", float(10.0)),
        ])))
    }

    fn press_brake(&mut self, position: &PyValue) -> Result<PyValue, CallError> {
        if !within(0, position, 1)? {
            return Ok(error("Pedal position must be between 0 and 1."));
        }
        if *position == PyValue::Int(0) {
            return Ok(self.release_brake());
        }
        let force = pyops::mul(position, &PyValue::Int(1000))?;
        self.brakePedalStatus = PyValue::str("pressed");
        self.brake_pedal_force = force.clone();
        Ok(PyValue::dict([
            ("brakePedalStatus", PyValue::str("pressed")),
            ("brakePedalForce", float(to_float(&force)?)),
        ]))
    }

    fn release_brake(&mut self) -> PyValue {
        self.brakePedalStatus = PyValue::str("released");
        self.brake_pedal_force = float(0.0);
        PyValue::dict([
            ("brakePedalStatus", PyValue::str("released")),
            ("brakePedalForce", float(0.0)),
        ])
    }

    fn cruise_control(&mut self, args: &[PyValue]) -> Result<PyValue, CallError> {
        let [speed, activate, distance] = args else {
            return Err(CallError::Unsupported("argument count".into()));
        };
        let distance = float(to_float(distance)?);
        let speed = to_float(speed)?;
        if self.engine_state == PyValue::str("stopped") {
            return Ok(error(
                "Start the engine before activating the cruise control.",
            ));
        }
        self.distanceToNextVehicle = distance.clone();
        let status = if truthy(activate) {
            // `speed % 5 != 0`: Python's float modulo is zero exactly when the remainder is.
            if !(0.0..=120.0).contains(&speed) || (speed % 5.0).is_nan() || speed % 5.0 != 0.0 {
                return Ok(error("Invalid speed"));
            }
            "active"
        } else {
            "inactive"
        };
        self.cruiseStatus = PyValue::str(status);
        Ok(PyValue::dict([
            ("cruiseStatus", PyValue::str(status)),
            ("currentSpeed", float(speed)),
            ("distanceToNextVehicle", distance),
        ]))
    }

    fn estimate_distance(&self, city_a: &PyValue, city_b: &PyValue) -> Result<PyValue, CallError> {
        let cities = self
            .filler("estimate_distance")?
            .map(|filler| filler.intermediary_cities.clone());
        let known = DISTANCES.iter().find(|(a, b, _)| {
            (*city_a == PyValue::str(*a) && *city_b == PyValue::str(*b))
                || (*city_a == PyValue::str(*b) && *city_b == PyValue::str(*a))
        });
        let mut distance = match known {
            Some((_, _, distance)) => one("distance", float(*distance)),
            None => error("distance not found in database."),
        };
        if let Some(cities) = cities {
            set_item(&mut distance, PyValue::str("intermediaryCities"), cities)?;
        }
        Ok(distance)
    }

    fn check_tire_pressure(&self) -> Result<PyValue, CallError> {
        let car_info = match self.filler("check_tire_pressure")? {
            Some(filler) => filler.car_status_metadata.clone(),
            None => PyValue::Dict(Vec::new()),
        };
        let tires = [
            &self.frontLeftTirePressure,
            &self.frontRightTirePressure,
            &self.rearLeftTirePressure,
            &self.rearRightTirePressure,
        ];
        let mut total = tires[0].clone();
        for tire in &tires[1..] {
            total = pyops::add(&total, tire)?;
        }
        let average = pyops::truediv(&total, &PyValue::Int(4))?;
        let healthy =
            order("<=", &PyValue::Int(30), &average)? && order("<=", &average, &PyValue::Int(35))?;
        Ok(PyValue::dict([
            ("frontLeftTirePressure", tires[0].clone()),
            ("frontRightTirePressure", tires[1].clone()),
            ("rearLeftTirePressure", tires[2].clone()),
            ("rearRightTirePressure", tires[3].clone()),
            ("healthy_tire_pressure", PyValue::Bool(healthy)),
            ("car_info", car_info),
        ]))
    }
}

impl Backend for VehicleControlApi {
    fn class_name(&self) -> &'static str {
        "VehicleControlAPI"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        long_context: &LongContext,
    ) -> Result<(), CallError> {
        self.load(config, long_context)
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let arg = |index: usize| args.get(index).cloned().unwrap_or(PyValue::None);
        match method {
            "startEngine" => self.start_engine(&arg(0)),
            "fillFuelTank" => self.fill_fuel_tank(&arg(0)),
            "lockDoors" => self.lock_doors(&arg(0), &arg(1)),
            "adjustClimateControl" => self.adjust_climate(&args),
            "get_outside_temperature_from_google" => {
                let mut answer = match self.filler("get_outside_temperature_from_google")? {
                    Some(filler) => filler.long_weather.clone(),
                    None => PyValue::Dict(Vec::new()),
                };
                let temperature = float(self.random.uniform(-10.0, 40.0));
                set_item(&mut answer, PyValue::str("outsideTemperature"), temperature)?;
                Ok(answer)
            }
            "get_outside_temperature_from_weather_com" => Ok(one("error", PyValue::Int(404))),
            "setHeadlights" => {
                let mode = arg(0);
                if !["on", "off", "auto"]
                    .iter()
                    .any(|m| mode == PyValue::str(*m))
                {
                    return Ok(error("Invalid headlight mode."));
                }
                let status = if mode == PyValue::str("on") {
                    "on"
                } else {
                    "off"
                };
                self.headLightStatus = PyValue::str(status);
                Ok(one("headlightStatus", PyValue::str(status)))
            }
            "displayCarStatus" => self.display_car_status(&arg(0)),
            "activateParkingBrake" => self.parking_brake(&arg(0)),
            "pressBrakePedal" => self.press_brake(&arg(0)),
            "releaseBrakePedal" => Ok(self.release_brake()),
            "setCruiseControl" => self.cruise_control(&args),
            "get_current_speed" => Ok(one("currentSpeed", float(self.random.uniform(0.0, 120.0)))),
            "display_log" => Ok(one("log", arg(0))),
            "estimate_drive_feasibility_by_mileage" => {
                let range = pyops::mul(&self.fuelLevel, &float(MILE_PER_GALLON))?;
                Ok(one(
                    "canDrive",
                    PyValue::Bool(!order("<", &range, &arg(0))?),
                ))
            }
            "liter_to_gallon" => Ok(one("gallon", pyops::mul(&arg(0), &float(0.264172))?)),
            "gallon_to_liter" => Ok(one("liter", pyops::mul(&arg(0), &float(3.78541))?)),
            "estimate_distance" => self.estimate_distance(&arg(0), &arg(1)),
            "get_zipcode_based_on_city" => {
                let city = arg(0);
                let zip = ZIP_CODES
                    .iter()
                    .find(|(name, _)| city == PyValue::str(*name))
                    .map_or("00000", |(_, zip)| zip);
                Ok(one("zipcode", PyValue::str(zip)))
            }
            "set_navigation" => {
                let destination = arg(0);
                self.destination = destination.clone();
                match &destination {
                    PyValue::Str(text) => {
                        Ok(one("status", PyValue::Str(format!("Navigating to {text}"))))
                    }
                    other => Err(CallError::raised(format!(
                        "can only concatenate str (not \"{}\") to str",
                        other.type_name()
                    ))),
                }
            }
            "check_tire_pressure" => self.check_tire_pressure(),
            "find_nearest_tire_shop" => Ok(one(
                "shopLocation",
                PyValue::str("456 Oakwood Avenue, Rivermist, 83214"),
            )),
            other => Err(no_attribute(
                &PyValue::Opaque("VehicleControlAPI".into()),
                other,
            )),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        vec![
            ("fuelLevel", self.fuelLevel.clone()),
            ("batteryVoltage", self.batteryVoltage.clone()),
            ("engine_state", self.engine_state.clone()),
            (
                "remainingUnlockedDoors",
                self.remainingUnlockedDoors.clone(),
            ),
            ("doorStatus", self.doorStatus.clone()),
            ("acTemperature", self.acTemperature.clone()),
            ("fanSpeed", self.fanSpeed.clone()),
            ("acMode", self.acMode.clone()),
            ("humidityLevel", self.humidityLevel.clone()),
            ("headLightStatus", self.headLightStatus.clone()),
            ("parkingBrakeStatus", self.parkingBrakeStatus.clone()),
            ("brakePedalStatus", self.brakePedalStatus.clone()),
            ("distanceToNextVehicle", self.distanceToNextVehicle.clone()),
            ("cruiseStatus", self.cruiseStatus.clone()),
            ("destination", self.destination.clone()),
            ("frontLeftTirePressure", self.frontLeftTirePressure.clone()),
            (
                "frontRightTirePressure",
                self.frontRightTirePressure.clone(),
            ),
            ("rearLeftTirePressure", self.rearLeftTirePressure.clone()),
            ("rearRightTirePressure", self.rearRightTirePressure.clone()),
            ("long_context", PyValue::Bool(self.long_context.is_on())),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::multi_turn::backend::call_text;

    /// Results as bfcl-eval's `VehicleControlAPI` (default scenario) returns them.
    #[test]
    fn default_scenario_calls_match_python() {
        let mut car = VehicleControlApi::default();
        let s = PyValue::str;
        assert_eq!(
            call_text(&mut car, "startEngine", vec![s("START")]),
            "{\"error\": \"All doors must be locked before starting the engine. Here are the \
             unlocked doors: driver, passenger, rear_left, rear_right\"}"
        );
        let all = PyValue::List(vec![
            s("driver"),
            s("passenger"),
            s("rear_left"),
            s("rear_right"),
        ]);
        assert_eq!(
            call_text(&mut car, "lockDoors", vec![PyValue::Bool(false), all]),
            "{\"lockStatus\": \"locked\", \"remainingUnlockedDoors\": 0}"
        );
        assert_eq!(
            call_text(&mut car, "pressBrakePedal", vec![PyValue::Int(1)]),
            "{\"brakePedalStatus\": \"pressed\", \"brakePedalForce\": 1000.0}"
        );
        assert_eq!(
            call_text(&mut car, "startEngine", vec![s("START")]),
            "{\"engineState\": \"running\", \"fuelLevel\": 0.0, \"batteryVoltage\": 12.6}"
        );
        assert_eq!(
            call_text(&mut car, "fillFuelTank", vec![PyValue::Int(30)]),
            "{\"fuelLevel\": 30.0}"
        );
        assert_eq!(
            call_text(&mut car, "get_outside_temperature_from_google", vec![]),
            "{\"outsideTemperature\": 36.63485703790535}"
        );
        assert_eq!(
            call_text(
                &mut car,
                "adjustClimateControl",
                vec![
                    PyValue::Int(70),
                    s("fahrenheit"),
                    PyValue::Int(50),
                    s("auto")
                ]
            ),
            "{\"currentACTemperature\": 70, \"climateMode\": \"auto\", \"humidityLevel\": 50.0}"
        );
        assert_eq!(car.acTemperature, PyValue::Float((70.0 - 32.0) * 5.0 / 9.0));
        assert_eq!(
            call_text(
                &mut car,
                "setCruiseControl",
                vec![PyValue::Int(62), PyValue::Bool(true), PyValue::Int(100)]
            ),
            "{\"error\": \"Invalid speed\"}"
        );
    }
}
