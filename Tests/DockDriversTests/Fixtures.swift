import Foundation

/// Fixture files generated from the peers (tests/peers/driver_fixtures.py: visca-over-ip and
/// pymavlink), and paths in the repository.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let profiles = root.appendingPathComponent("profiles/visca").path

    static func entries(_ file: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: directory.appendingPathComponent(file))
        return try JSONSerialization.jsonObject(with: data) as! [[String: Any]]
    }

    static func hex(_ text: String) -> [UInt8] { text.split(separator: " ").map { UInt8($0, radix: 16)! } }

    static func float(_ any: Any) -> Float {
        if let s = any as? String, s == "nan" { return .nan }
        return Float((any as! NSNumber).doubleValue)
    }
}

extension Array where Element == UInt8 {
    var hexText: String { map { String(format: "%02x", $0) }.joined(separator: " ") }
}
