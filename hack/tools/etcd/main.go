// Command etcd is the upstream etcd server, built from the go.etcd.io/etcd/server/v3
// module instead of downloaded as a release tarball (GitHub downloads are not
// available everywhere this repo is built). It is what etcd's own main.go does.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
