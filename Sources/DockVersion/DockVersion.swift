/// The release, written in this one place: every tool's `--version`, `dockd.version`, the man pages
/// and the Debian package (`make deb` reads it from this file) take it from here.
public enum DockVersion {
    public static let string = "0.1.0"
}
