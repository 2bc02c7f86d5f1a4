/// One setting a driver takes (a `[[device]]` key in dockd.conf, a `--option` of dock-driver-probe).
public struct DriverOption: Sendable {
    public enum Kind: Sendable, Equatable {
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        case text
        case choice([String])

        /// The word dockd.conf(5) uses for the value's type.
        public var typeName: String {
            switch self {
            case .integer: "integer"
            case .number: "number"
            case .text, .choice: "string"
            }
        }

        /// What a value must be, for error texts: "must be an integer in 1...7".
        public var expectation: String {
            switch self {
            case .integer(let range): "must be an integer in \(range)"
            case .number(let range): "must be a number in \(range)"
            case .text: "must be a string"
            case .choice(let names): "must be one of \(names.joined(separator: ", "))"
            }
        }

        /// A value of this kind from its text (a command line's KEY=VALUE), nil if it is not one.
        public func value(parsing text: String) -> DriverValue? {
            switch self {
            case .integer: Int(text).map(DriverValue.integer)
            case .number: Double(text).map(DriverValue.number)
            case .text, .choice: .text(text)
            }
        }
    }

    public let key: String
    public let kind: Kind
    /// nil: none, and `doc` says what stands in for it.
    public let defaultValue: DriverValue?
    /// One line for dockd.conf(5), `--list-drivers` and the probe's help.
    public let doc: String

    public init(_ key: String, _ kind: Kind, default defaultValue: DriverValue?, _ doc: String) {
        self.key = key; self.kind = kind; self.defaultValue = defaultValue; self.doc = doc
    }

    /// Why `value` is not one this option takes, nil if it is. A whole number is a number too
    /// (TOML's `20` for a rate), and an integer given as a whole float (`2.0`) is an integer.
    func problem(with value: DriverValue) -> String? {
        switch (kind, value) {
        case (.integer(let range), .integer(let v)): range.contains(v) ? nil : kind.expectation + ", not \(v)"
        case (.number(let range), .number(let v)): range.contains(v) ? nil : kind.expectation + ", not \(v)"
        case (.number(let range), .integer(let v)): range.contains(Double(v)) ? nil : kind.expectation + ", not \(v)"
        case (.text, .text): nil
        case (.choice(let names), .text(let v)): names.contains(v) ? nil : kind.expectation + ", not \(v)"
        default: kind.expectation + ", not \(value)"
        }
    }
}

/// A driver option's value as written.
public enum DriverValue: Sendable, Equatable, CustomStringConvertible {
    case integer(Int)
    case number(Double)
    case text(String)

    public var description: String {
        switch self {
        case .integer(let v): "\(v)"
        case .number(let v): "\(v)"
        case .text(let v): v
        }
    }
}

/// The values a driver is made with: what was given, else the option's default. Only the driver's
/// own `make` reads it, by the keys its definition declares (checked before `make` runs).
public struct DriverSettings: Sendable {
    let definition: DriverDefinition
    let values: [String: DriverValue]
    /// The daemon's heartbeat timeout (dockd.conf `[daemon]`), for drivers whose protocol has one.
    public let heartbeatTimeoutMs: UInt16

    private func value(_ key: String) -> DriverValue? {
        precondition(definition.option(key) != nil, "\(definition.name) reads \(key), which it does not declare")
        return values[key] ?? definition.option(key)?.defaultValue
    }

    public func integer(_ key: String) -> Int {
        guard case .integer(let v)? = value(key) else { preconditionFailure("\(key) is not an integer option with a default") }
        return v
    }

    public func number(_ key: String) -> Double {
        switch value(key) {
        case .number(let v)?: return v
        case .integer(let v)?: return Double(v)
        default: preconditionFailure("\(key) is not a number option with a default")
        }
    }

    /// A number option's value, nil when neither given nor defaulted (its doc says what stands in).
    public func optionalNumber(_ key: String) -> Double? {
        switch value(key) {
        case .number(let v)?: v
        case .integer(let v)?: Double(v)
        default: nil
        }
    }

    /// A text option's value, nil when neither given nor defaulted.
    public func text(_ key: String) -> String? {
        guard case .text(let v)? = value(key) else { return nil }
        return v
    }
}
