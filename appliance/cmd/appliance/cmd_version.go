package main

import (
	"context"
	"fmt"

	"github.com/peage/appliance/internal/version"
)

func init() {
	register("version", "print the build version", func(context.Context, []string) error {
		fmt.Println("appliance", version.String())
		return nil
	})
}
