import ArgumentParser
import DockTracking
import Foundation

/// The parts of a MOTChallenge seqinfo.ini the tracker needs.
struct SequenceInfo {
    let frameRate: Double
    let length: Int

    init(directory: String) throws {
        let path = directory + "/seqinfo.ini"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard let rate = values["frameRate"].flatMap(Double.init), rate > 0,
              let length = values["seqLength"].flatMap(Int.init) else {
            throw ValidationError("\(path): frameRate and seqLength are required")
        }
        frameRate = rate
        self.length = length
    }
}

/// det.txt rows (`frame,-1,left,top,width,height,confidence,...`) grouped by frame.
struct MOTDetections {
    struct Detection {
        let box: Box
        let confidence: Double
    }

    let byFrame: [Int: [Detection]]
    let lastFrame: Int

    init(directory: String) throws {
        let candidates = [directory + "/det.txt", directory + "/det/det.txt"]
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw ValidationError("no det.txt in \(directory)")
        }
        var byFrame: [Int: [Detection]] = [:]
        for (number, line) in try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard fields.count >= 7, let frame = fields[0], let left = fields[2], let top = fields[3],
                  let width = fields[4], let height = fields[5], let confidence = fields[6] else {
                throw ValidationError("\(path):\(number + 1): expected frame,id,left,top,width,height,confidence")
            }
            byFrame[Int(frame), default: []].append(
                Detection(box: Box(left: left, top: top, width: width, height: height), confidence: confidence))
        }
        self.byFrame = byFrame
        lastFrame = byFrame.keys.max() ?? 0
    }
}
