package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ScheduledBackupSpec takes a Backup of one stream on a schedule and keeps
// the latest of them.
//
// +kubebuilder:validation:XValidation:rule="has(self.keep.count) || has(self.keep.age)",message="keep needs a count or an age"
type ScheduledBackupSpec struct {
	// Schedule is a cron expression of five fields (minute hour
	// day-of-month month day-of-week) or a descriptor such as @daily, in
	// UTC.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`

	// Suspend stops new backups; those taken are kept.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Backup is what each Backup takes.
	Backup BackupSpec `json:"backup"`

	// Keep says which of this schedule's Succeeded backups stay. One
	// past the count or older than the age is deleted, its data on the
	// claim with it: retention is the one way kubenats deletes backup
	// data, and only for backups of a schedule that asks for it. The
	// newest Succeeded backup is always kept.
	Keep BackupRetention `json:"keep"`
}

// BackupRetention bounds a schedule's backups by count, age or both.
type BackupRetention struct {
	// Count is how many Succeeded backups stay.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Count int32 `json:"count,omitempty"`
	// Age is how long a Succeeded backup stays, such as 168h.
	// +optional
	Age Duration `json:"age,omitempty"`
}

// ScheduledBackupStatus is the schedule's progress.
type ScheduledBackupStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions, Ready first: Ready is False when the schedule is
	// invalid or its last backup failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastScheduleTime is when the last Backup was made.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// LastBackup is the last Backup made.
	// +optional
	LastBackup string `json:"lastBackup,omitempty"`
	// LastSuccessfulTime is when the newest Succeeded backup finished.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// NextScheduleTime is when the next Backup is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
}

// ScheduledBackup takes Backups of a stream on a schedule (docs/backup.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=nats
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="name may be at most 40 characters: each Backup is <name>-<unix time>"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Stream",type=string,JSONPath=`.spec.backup.stream`
// +kubebuilder:printcolumn:name="Last",type=string,JSONPath=`.status.lastBackup`
// +kubebuilder:printcolumn:name="Next",type=date,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type ScheduledBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ScheduledBackupSpec   `json:"spec"`
	Status ScheduledBackupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ScheduledBackupList is a list of ScheduledBackups.
type ScheduledBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledBackup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ScheduledBackup{}, &ScheduledBackupList{})
}

// LabelScheduledBackup names, on a Backup, the ScheduledBackup that made
// it: its retention applies to the Backup, data and all.
const LabelScheduledBackup = "kubenats.io/scheduled-backup"

// BackupDataFinalizer is on each Backup a ScheduledBackup makes: when its
// schedule's retention deletes it (AnnotationExpired), its data goes
// first. Deleted any other way (by hand, with its namespace), a Backup
// leaves its data: a lost namespace must not take its backups with it.
const BackupDataFinalizer = "kubenats.io/backup-data"

// AnnotationExpired marks a Backup its schedule's retention deletes,
// data and all; its value is the schedule's name.
const AnnotationExpired = "kubenats.io/expired"
