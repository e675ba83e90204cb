// Command local-path-helper creates and deletes the directory of one local-path volume.
// It replaces the busybox `sh /script/setup|teardown` helper pod of local-path-provisioner
// v0.0.30, because the test cluster has no image registry and so no busybox: the
// provisioner's config sets setupCommand/teardownCommand to this binary, and the helper
// pod runs it in the pause image with the binary bind-mounted from the host (see
// hack/control-plane.sh). The provisioner passes:
//
//	-p <volume dir> -s <size in bytes> -m Filesystem|Block -a create|delete
//
// and mounts the volume's parent directory at the same path inside the pod. The actions
// are those of the upstream default scripts: `mkdir -m 0777 -p` and `rm -rf`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

func main() {
	path := flag.String("p", "", "volume directory")
	mode := flag.String("m", "Filesystem", "volume mode")
	action := flag.String("a", "", "create or delete")
	flag.String("s", "0", "requested size in bytes (unused: a directory has no size)")
	flag.Parse()
	if err := run(*path, *mode, *action); err != nil {
		fmt.Fprintln(os.Stderr, "local-path-helper:", err)
		os.Exit(1)
	}
}

func run(path, mode, action string) error {
	// The provisioner never passes "/" or a relative path, but this runs as root.
	if !filepath.IsAbs(path) || filepath.Clean(path) == "/" {
		return fmt.Errorf("refusing volume path %q", path)
	}
	if mode != "Filesystem" {
		return fmt.Errorf("volume mode %q is not supported", mode)
	}
	switch action {
	case "create":
		// 0777 like the upstream script, so pods running as any uid can write. The umask
		// would strip the group/other bits from Mkdir's mode, hence the Chmod.
		syscall.Umask(0)
		if err := os.MkdirAll(path, 0o777); err != nil {
			return err
		}
		return os.Chmod(path, 0o777)
	case "delete":
		return os.RemoveAll(path)
	default:
		return fmt.Errorf("unknown action %q", action)
	}
}
