// Loads a compose file the way docker compose does (compose-spec/compose-go) and prints the
// normalized project as JSON: a file compose would refuse fails here with compose's message.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check docker-compose.yml")
		os.Exit(2)
	}
	options, err := cli.NewProjectOptions([]string{os.Args[1]}, cli.WithOsEnv, cli.WithDotEnv,
		cli.WithName("searchpulse"), cli.WithProfiles([]string{"*"}))
	if err == nil {
		project, loadErr := options.LoadProject(context.Background())
		if loadErr == nil {
			err = json.NewEncoder(os.Stdout).Encode(project)
		} else {
			err = loadErr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
