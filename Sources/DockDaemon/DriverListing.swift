import DockDrivers
import DockJSON
import NIOCore

/// `dockd --list-drivers`: the driver table as people read it (gpsd -l), or as JSON for tools
/// and tests (every option with its type, range, default and doc).
package enum DriverListing {
    package static var text: String {
        DriverTable.all.map { d in
            var lines = ["\(d.name): \(d.summary)",
                         "  links (dockd.conf keys): \(d.links.map(\.configKey).joined(separator: ", "))" + (d.defaultBaud.map { "; serial rate \($0) unless `baud` says" } ?? ""),
                         "  can: \(d.capabilities.names.joined(separator: ", "))"]
            if let h = d.hotplug {
                var which = ["\(h.marker)=1"]
                if !h.usbIDs.isEmpty { which.append("USB " + h.usbIDs.map { "\($0.vendor):\($0.product)" }.joined(separator: ", ")) }
                if h.uvcPanTilt { which.append("a UVC camera whose USB descriptors list pan/tilt") }
                lines.append("  hotplug: \(h.subsystem) devices with " + which.joined(separator: " or "))
            }
            lines += d.options.isEmpty ? ["  options: none"] : d.options.map { o in
                "  \(o.key) (\(range(of: o.kind))\(o.defaultValue.map { ", default \($0)" } ?? "")): \(o.doc)"
            }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    static var json: JSONValue {
        .array(DriverTable.all.map { d in
            var object: [String: JSONValue] = [
                "name": .string(d.name), "summary": .string(d.summary), "links": .array(d.links.map { .string($0.configKey) }),
                "capabilities": .array(d.capabilities.names.map(JSONValue.string)),
                "options": .array(d.options.map(option)),
            ]
            if let baud = d.defaultBaud { object["default_baud"] = .number(Double(baud)) }
            if let h = d.hotplug {
                object["hotplug"] = ["subsystem": .string(h.subsystem), "marker": .string(h.marker),
                                     "usb": .array(h.usbIDs.map { .string("\($0.vendor):\($0.product)") }), "uvc_pan_tilt": .bool(h.uvcPanTilt)]
            }
            return .object(object)
        })
    }

    package static var jsonText: String {
        var buffer = ByteBuffer()
        buffer.writeJSON(json)
        return String(buffer: buffer)
    }

    private static func option(_ o: DriverOption) -> JSONValue {
        var object: [String: JSONValue] = ["key": .string(o.key), "type": .string(o.kind.typeName), "doc": .string(o.doc)]
        switch o.kind {
        case .integer(let r): object["range"] = [.number(Double(r.lowerBound)), .number(Double(r.upperBound))]
        case .number(let r): object["range"] = [.number(r.lowerBound), .number(r.upperBound)]
        case .choice(let names): object["choices"] = .array(names.map(JSONValue.string))
        case .text: break
        }
        switch o.defaultValue {
        case .integer(let v)?: object["default"] = .number(Double(v))
        case .number(let v)?: object["default"] = .number(v)
        case .text(let v)?: object["default"] = .string(v)
        case nil: break
        }
        return .object(object)
    }

    private static func range(of kind: DriverOption.Kind) -> String {
        switch kind {
        case .integer(let r): "integer \(r.lowerBound)…\(r.upperBound)"
        case .number(let r): "number \(r.lowerBound)…\(r.upperBound)"
        case .text: "string"
        case .choice(let names): names.joined(separator: " | ")
        }
    }
}
