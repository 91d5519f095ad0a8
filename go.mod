module github.com/aclc/aclc

go 1.26.8

require (
	github.com/ovn-kubernetes/libovsdb v0.8.1
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/text v0.36.0 // indirect
)
