package dds

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// LastAnswer is how the EU information system last answered a call made
// for an organisation in one environment: what an operator looks at first
// when statements stop moving.
type LastAnswer struct {
	Operation string    // an euis.Op constant: submitDds, getDds, ...
	Outcome   string    // an euis.Outcome constant: ok, rejected, fault, transient, error
	Message   string    // what went wrong, in words; "" for an answer
	At        time.Time // when the call ended
}

// lastAnswers holds each tenant's LastAnswer since the appliance started.
// They are not stored: the calls themselves leave their trace in the
// statements' histories and the submission jobs' attempts, which are.
type lastAnswers struct {
	mu   sync.Mutex
	last map[storage.Tenant]LastAnswer
}

func (l *lastAnswers) record(t storage.Tenant, a LastAnswer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[storage.Tenant]LastAnswer{}
	}
	l.last[t] = a
}

// LastAnswer is the EU system's last answer to t's calls since the
// appliance started, and false when t has made none.
func (s *Service) LastAnswer(t storage.Tenant) (LastAnswer, bool) {
	s.answers.mu.Lock()
	defer s.answers.mu.Unlock()
	a, ok := s.answers.last[t]
	return a, ok
}

// client is t's environment's EU client, each of whose answers becomes
// t's LastAnswer.
func (s *Service) client(t storage.Tenant) euis.Client {
	return euis.Observe(s.o.Clients[t.Env], func(op string, _ time.Time, err error) {
		s.answers.record(t, LastAnswer{Operation: op, Outcome: euis.Outcome(err), Message: answerMessage(op, err), At: s.o.DB.Now()})
	})
}

// answerMessage words the error of a call of op for an operator: for a
// failure to reach the EU system the lastAttempt message of the
// submission job (AttemptOf, which keeps addresses out), and its own
// words for a refusal.
func answerMessage(op string, err error) string {
	var fault *euis.Fault
	var violations euis.Violations
	switch {
	case err == nil:
		return ""
	case euis.IsTransient(err):
		return strings.TrimSuffix(AttemptOf(err).Message, attemptAgain)
	case errors.As(err, &fault):
		what := oneLine(fault.Message, maxFaultText)
		if len(fault.Reasons) > 0 {
			what = strings.Join(fault.Reasons, ", ")
		}
		return fmt.Sprintf("the EU information system refused %s (%s)", op, what)
	case errors.As(err, &violations):
		return fmt.Sprintf("%s was not sent: the statement breaks the EU information system's rules", op)
	case errors.Is(err, euis.ErrNotConfigured):
		return fmt.Sprintf("%s was not sent: the EU information system credentials are not complete", op)
	}
	return fmt.Sprintf("%s failed: %s", op, oneLine(err.Error(), maxFaultText))
}
